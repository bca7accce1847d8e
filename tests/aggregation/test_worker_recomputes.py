"""With a real Redis broker and a real Celery worker: saves reach the aggregates, even across a worker outage,
and a duplicated message gives one correct result."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from aggregation import dispatch, tasks
from aggregation.models import ItemAggregate, ProjectAggregate, ResponseAggregate
from tests.aggregation.conftest import annotate_ifs, celery_configured, project_make

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]
# One queue per test process: parallel test workers (xdist) never take each other's tasks.
QUEUE = f"penumbra-test-{uuid.uuid4().hex[:12]}"
WAIT_SECONDS = 30


def _test_database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "DATABASE_URL": _test_database_url(),
            "REDIS_URL": os.environ["PENUMBRA_TEST_REDIS_URL"],
            "CELERY_QUEUE": QUEUE,
            "AGGREGATION_PROJECT_DELAY": "1",
            "DB_CONN_MAX_AGE": "0",
        }
        command = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            f"--queues={QUEUE}",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=INFO",
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""


@pytest.fixture
def worker(transactional_db, tmp_path) -> Iterator[Worker]:
    redis_url = os.environ["PENUMBRA_TEST_REDIS_URL"]
    running = Worker(tmp_path / "worker.log")
    with celery_configured(broker_url=redis_url, task_always_eager=False, task_default_queue=QUEUE):
        try:
            running.start()
            yield running
        finally:
            running.stop()
            # Leave nothing queued for a later session.
            from config.celery import app

            with app.connection_for_write() as connection:
                connection.default_channel.queue_purge(QUEUE)


def _wait_for(condition: Callable[[], bool], worker: Worker, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not happen within {WAIT_SECONDS} s; worker log:\n{worker.log()}")


def _save(item, annotator, values) -> None:
    with transaction.atomic():
        annotate_ifs(item, annotator, values)
        dispatch.on_annotations_changed(project_id=item.project_id, item_ids=[item.pk])


def test_a_saved_annotation_reaches_its_aggregate(worker):
    project, items, annotators = project_make(n_items=2, n_annotators=2)

    _save(items[0], annotators[0], [(800, 100), (100, 800)])
    _save(items[0], annotators[1], [(700, 200), (200, 700)])

    _wait_for(
        lambda: ItemAggregate.objects.filter(item=items[0], n_annotators=2).exists(), worker, "the item aggregate"
    )
    assert ItemAggregate.objects.get(item=items[0]).best_position == 0
    _wait_for(
        lambda: ProjectAggregate.objects.filter(project=project, progress__labels_total=2).exists(),
        worker,
        "the debounced project figures",
    )


def test_work_saved_while_the_worker_is_down_is_done_when_it_returns(worker):
    project, items, annotators = project_make(n_items=1, n_annotators=1)
    worker.stop()

    _save(items[0], annotators[0], [(100, 800), (900, 0)])
    time.sleep(1)
    assert not ItemAggregate.objects.filter(item=items[0]).exists()

    worker.start()
    _wait_for(lambda: ItemAggregate.objects.filter(item=items[0]).exists(), worker, "the queued recomputation")
    assert ItemAggregate.objects.get(item=items[0]).best_position == 1
    _wait_for(lambda: ProjectAggregate.objects.filter(project=project).exists(), worker, "the project figures")
    # And reconciliation, sent by beat in production, agrees that nothing is stale any more.
    tasks.aggregates_reconcile.delay()
    _wait_for(
        lambda: not ItemAggregate.objects.filter(item=items[0], source_updated_at__isnull=True).exists(),
        worker,
        "reconciliation",
    )


def test_the_same_task_twice_gives_one_correct_result(worker):
    project, items, annotators = project_make(n_items=1, n_annotators=2)
    with transaction.atomic():
        annotate_ifs(items[0], annotators[0], [(600, 300), (200, 500)])
        annotate_ifs(items[0], annotators[1], [(800, 100), (400, 400)])

    tasks.item_aggregates.delay(project.pk, [items[0].pk])
    tasks.item_aggregates.delay(project.pk, [items[0].pk])
    tasks.project_recompute.delay(project.pk)  # queued behind both: when its figures exist, both have run

    _wait_for(lambda: ProjectAggregate.objects.filter(project=project).exists(), worker, "the three tasks")
    assert ItemAggregate.objects.filter(item=items[0]).count() == 1
    overall = {
        row.response.position: (row.mu, row.nu)
        for row in ResponseAggregate.objects.filter(
            item=items[0], criterion=None, operator="weighted_mean"
        ).select_related("response")
    }
    assert ResponseAggregate.objects.filter(item=items[0]).count() == 2 * 2 * 3
    # The project run may have reweighted the item; whatever the weights, position 0 stays ahead and valid.
    assert overall[0][0] - overall[0][1] > overall[1][0] - overall[1][1]
    assert ItemAggregate.objects.get(item=items[0]).best_position == 0
