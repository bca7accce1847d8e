"""A real Celery worker killed with SIGKILL half-way through an import: a new worker, sent the job again by the
recovery task on beat, completes it with every row exactly once."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from projects.imports.tasks import import_job_start
from projects.models import Item, Job, Response
from tests.aggregation.conftest import celery_configured
from tests.factories import ProjectFactory
from tests.processes import Worker, new_queue, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

ROWS = 6000


def _items_file() -> SimpleUploadedFile:
    text = "".join(
        json.dumps({"id": f"row-{i}", "prompt": f"Prompt {i}", "responses": [f"a{i}", f"b{i}"]}) + "\n"
        for i in range(ROWS)
    )
    return SimpleUploadedFile("items.jsonl", text.encode(), content_type="application/jsonl")


@pytest.fixture
def queue(transactional_db) -> Iterator[str]:
    name = new_queue()
    with celery_configured(
        broker_url=os.environ["PENUMBRA_TEST_REDIS_URL"], task_always_eager=False, task_default_queue=name
    ):
        yield name
        from config.celery import app

        with app.connection_for_write() as connection:
            connection.default_channel.queue_purge(name)


def test_an_import_whose_worker_is_killed_is_completed_by_another(queue, tmp_path):
    project = ProjectFactory()
    broker = os.environ["PENUMBRA_TEST_REDIS_URL"]
    # Slow enough to be killed half-way: 0.2 s every 100 lines, about 12 s for the file.
    doomed = Worker(log_path=tmp_path / "doomed.log", broker_url=broker, queue=queue, env={"JOB_TEST_PAUSE_MS": "200"})
    rescuer = Worker(
        log_path=tmp_path / "rescuer.log",
        broker_url=broker,
        queue=queue,
        env={"JOB_STALE_SECONDS": "2", "JOB_RECOVER_SECONDS": "1", "JOB_HEARTBEAT_SECONDS": "1"},
        beat=True,
    )
    try:
        doomed.start()
        job = import_job_start(project=project, user=None, kind=Job.Kind.IMPORT_ITEMS, upload=_items_file(), options={})
        wait_for(
            lambda: Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, progress_done__gte=2000).exists(),
            "the import to pass line 2000",
            doomed.log,
        )
        doomed.kill()

        job.refresh_from_db()
        assert job.status == Job.Status.RUNNING  # nobody told the database the worker died
        assert job.attempts == 1
        assert not Item.objects.filter(project=project).exists()  # its transaction died with it

        rescuer.start()
        wait_for(
            lambda: Job.objects.filter(pk=job.pk, status__in=[Job.Status.DONE, Job.Status.FAILED]).exists(),
            "the recovered import",
            rescuer.log,
        )
    finally:
        doomed.stop()
        rescuer.stop()

    job.refresh_from_db()
    assert job.status == Job.Status.DONE, (job.result, rescuer.log())
    assert job.attempts == 2
    assert job.result["created"] == ROWS
    assert job.progress_done == job.progress_total == ROWS
    assert Item.objects.filter(project=project).count() == ROWS
    assert Item.objects.filter(project=project).values("external_id").distinct().count() == ROWS
    assert Response.objects.filter(item__project=project).count() == 2 * ROWS
