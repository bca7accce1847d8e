"""Redis (a private redis-server) is cut OUTAGES times while annotators save through a real gunicorn and a real
Celery worker with beat recompute. The worker meets the outages in every state: holding the debounced project
recompute (a countdown task, unacknowledged), running a recompute, idle. Nobody restarts anything. Afterwards the
worker is alive, every acknowledged save is stored once with its values, the figures are fresh within the reconcile
period, and an export requested while Redis was down has run."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from rest_framework.authtoken.models import Token

from aggregation import services
from projects.models import Job, Membership
from tests.factories import MembershipFactory, UserFactory
from tests.processes import RedisServer, wait_for
from tests.stack import penumbra_stack
from tests.traffic import Annotators, project_with_annotators, saves_missing

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _quiet_httpx():
    # One INFO line per request would bury the failure in the captured log.
    logging.getLogger("httpx").setLevel(logging.WARNING)


OUTAGES = 8
OUTAGE_SECONDS = 1.5
# Traffic with the worker connected before the next cut, so every outage finds it connected (kombu's reconnect
# backs off 2, 4, 6 … s: cut on a fixed beat, the worker would sleep through some outages).
BETWEEN_SECONDS = 1.0
RECONCILE_SECONDS = 5
ENV = {
    "AGGREGATION_RECONCILE_SECONDS": str(RECONCILE_SECONDS),
    "AGGREGATION_PROJECT_DELAY": "2",  # the worker holds a countdown task most of the time
    # How soon beat's jobs_recover sends a job again whose message was lost (the private Redis keeps nothing over
    # a restart, so a message queued or held when it stopped is gone): the outbox's bounds, shortened.
    "JOB_RECOVER_SECONDS": "2",
    "JOB_REQUEUE_SECONDS": "5",
    "JOB_HEARTBEAT_SECONDS": "1",
    "JOB_STALE_SECONDS": "4",
}


def test_the_worker_survives_redis_outages_during_annotation(transactional_db, tmp_path):
    redis = RedisServer(tmp_path)
    redis.start()
    project, items, _, tokens = project_with_annotators(n_items=12, n_annotators=4)
    lead = UserFactory(username="outage-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    lead_token = Token.objects.create(user=lead).key
    try:
        with penumbra_stack(tmp_path, redis_url=redis.url, beat=True, env=ENV) as stack:
            worker = stack.workers[0]
            traffic = Annotators(
                urls=stack.urls, project_id=project.pk, item_ids=[i.pk for i in items], tokens=tokens
            ).start()
            job_id = None
            for outage in range(OUTAGES):
                connected = outage + 1
                wait_for(
                    lambda n=connected: worker.log_path.read_text(errors="replace").count("Connected to") >= n,
                    f"the worker to reconnect before outage {outage + 1}",
                    worker.log,
                )
                time.sleep(BETWEEN_SECONDS)
                redis.stop()
                if outage == OUTAGES // 2:
                    answer = httpx.post(
                        f"{stack.url}/api/projects/{project.pk}/export/?format=dpo",
                        headers={"Authorization": f"Token {lead_token}"},
                        timeout=30,
                    )
                    assert answer.status_code == 202, answer.text
                    job_id = answer.json()["job"]
                time.sleep(OUTAGE_SECONDS)
                assert worker.running(), f"the worker died in outage {outage + 1}:\n{worker.log()}"
                redis.start()
            time.sleep(BETWEEN_SECONDS)
            result = traffic.stop()
            assert worker.running(), f"the worker died:\n{worker.log()}"
            returned = time.monotonic()

            assert not result.failures, result.failures[:5]
            assert result.saves > 50, f"too little traffic to mean anything: {result.saves} saves"
            assert saves_missing(project.pk, result) == []

            # Beat's reconciliation finds what the outages left stale; the worker recomputes it.
            deadline = returned + 3 * RECONCILE_SECONDS + 10
            while time.monotonic() < deadline:
                if not services.stale_items_list() and project.pk not in services.stale_projects_list():
                    break
                time.sleep(0.5)
            fresh_after = time.monotonic() - returned
            assert not services.stale_items_list(), f"items still stale:\n{worker.log()}"
            assert project.pk not in services.stale_projects_list(), f"figures still stale:\n{worker.log()}"

            assert job_id is not None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and Job.objects.get(pk=job_id).status != Job.Status.DONE:
                time.sleep(0.5)
            job = Job.objects.get(pk=job_id)
            assert job.status == Job.Status.DONE, f"the job requested during an outage: {job.status}\n{worker.log()}"

            log = worker.log_path.read_text(errors="replace")
            assert log.count("Connection to broker lost") == OUTAGES, "an outage went unnoticed"
            assert "Unrecoverable error" not in log
            print(
                f"\n{OUTAGES} outages of {OUTAGE_SECONDS} s: {result.saves} saves acknowledged, "
                f"{result.retries} retries, statuses {result.statuses}, "
                f"'Restoring … unacknowledged' {log.count('unacknowledged message')} times, "
                f"figures fresh {fresh_after:.1f} s after the last outage"
            )
    finally:
        redis.stop()
