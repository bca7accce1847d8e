"""Redis (a private redis-server) is cut OUTAGES times while annotators save through a real gunicorn and a real
Celery worker with beat recompute. The worker meets the outages in every state: holding the debounced project
recompute (a countdown task, unacknowledged), running a recompute, idle. Nobody restarts anything. Afterwards the
worker is alive, every acknowledged save is stored once with its values, the figures are fresh within the reconcile
period, and an export requested while Redis was down has run."""

from __future__ import annotations

import time

import pytest

from projects.models import Job
from tests.processes import wait_for
from tests.stack import penumbra_stack
from tests.traffic import project_with_annotators, saves_missing

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


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


def test_the_worker_survives_redis_outages_during_annotation(transactional_db, tmp_path, redis):
    traffic = project_with_annotators(n_items=12, n_annotators=4)
    with penumbra_stack(tmp_path, redis_url=redis.url, beat=True, env=ENV) as stack:
        worker = stack.workers[0]
        annotators = traffic.annotators(stack.urls)
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
                job_id = traffic.export_requested(stack.url)
            time.sleep(OUTAGE_SECONDS)
            assert worker.running(), f"the worker died in outage {outage + 1}:\n{worker.log()}"
            redis.start()
        time.sleep(BETWEEN_SECONDS)
        result = annotators.stop()
        assert worker.running(), f"the worker died:\n{worker.log()}"
        returned = time.monotonic()

        assert not result.failures, result.failures[:5]
        assert result.saves > 50, f"too little traffic to mean anything: {result.saves} saves"
        assert saves_missing(traffic.project.pk, result) == []

        # Beat's reconciliation finds what the outages left stale; the worker recomputes it.
        wait_for(traffic.figures_fresh, "the figures catching up", worker.log, 3 * RECONCILE_SECONDS + 10, poll=0.5)
        fresh_after = time.monotonic() - returned

        assert job_id is not None
        wait_for(
            lambda: Job.objects.get(pk=job_id).status == Job.Status.DONE,
            "the job requested during an outage",
            lambda: f"status {Job.objects.get(pk=job_id).status}\n{worker.log()}",
            seconds=30,
            poll=0.5,
        )

        log = worker.log_path.read_text(errors="replace")
        assert log.count("Connection to broker lost") == OUTAGES, "an outage went unnoticed"
        assert "Unrecoverable error" not in log
        print(
            f"\n{OUTAGES} outages of {OUTAGE_SECONDS} s: {result.saves} saves acknowledged, "
            f"{result.retries} retries, statuses {result.statuses}, "
            f"'Restoring … unacknowledged' {log.count('unacknowledged message')} times, "
            f"figures fresh {fresh_after:.1f} s after the last outage"
        )
