"""A real Celery worker, started as docker-compose.yml starts it, outlives a Redis outage: it reconnects when the
broker is back and runs the next task. Redis here is a private redis-server on a free port, so stopping it
disturbs nobody else."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import yaml

from aggregation import tasks
from aggregation.models import ItemAggregate
from tests.aggregation.conftest import annotate_ifs, celery_configured, project_make
from tests.processes import ROOT, RedisServer, Worker, new_queue, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WAIT_SECONDS = 45
OUTAGE_SECONDS = 5


def _compose_worker_arguments() -> list[str]:
    """The worker's command from docker-compose.yml, without its pool size (the helper runs one process)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = [arg for arg in compose["services"]["worker"]["command"] if not arg.startswith("--concurrency")]
    assert command[0] == "celery"
    return command[1:]


@pytest.fixture
def outage_setup(transactional_db, tmp_path) -> Iterator[tuple[RedisServer, Worker]]:
    redis = RedisServer(tmp_path)
    redis.start()
    queue = new_queue("penumbra-outage")
    worker = Worker(
        log_path=tmp_path / "worker.log", broker_url=redis.url, queue=queue, arguments=_compose_worker_arguments()
    )
    worker.start()
    try:
        with celery_configured(broker_url=redis.url, task_always_eager=False, task_default_queue=queue):
            yield redis, worker
    finally:
        worker.stop()
        redis.stop()


def _send_until_done(item, worker: Worker, what: str) -> None:
    # Right after the outage the test process's own pooled connection may be the stale one: send again until
    # the worker answers, as reconciliation would.
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            tasks.item_aggregates.delay(item.project_id, [item.pk])
        except Exception:  # the sender's reconnect, not the worker's, is not under test
            time.sleep(0.5)
            continue
        try:
            wait_for(lambda: ItemAggregate.objects.filter(item=item).exists(), what, worker.log, seconds=10, poll=0.3)
            return
        except pytest.fail.Exception:
            continue
    pytest.fail(f"{what}: the worker never ran the task; log:\n{worker.log()}")


def test_the_worker_runs_tasks_after_redis_comes_back(outage_setup):
    redis, worker = outage_setup
    _, items, annotators = project_make(n_items=2, n_annotators=1)
    for item in items:
        annotate_ifs(item, annotators[0], [(800, 100), (100, 800)])

    _send_until_done(items[0], worker, "the task before the outage")

    redis.stop()
    time.sleep(OUTAGE_SECONDS)
    assert worker.running(), f"the worker exited while Redis was down:\n{worker.log()}"
    redis.start()

    _send_until_done(items[1], worker, "the task after the outage")
    assert worker.running()
    log = worker.log_path.read_text()
    assert "Connection to broker lost" in log or "Cannot connect to" in log, "the outage must have been noticed"
    assert "Unrecoverable error" not in log
