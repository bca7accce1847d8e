"""With CELERY_JOBS_QUEUE set, background jobs (an export here) go to that queue and a save's follow-ups to the
default one, so a worker serving the default queue never has an export ahead of a recompute. Unset, both share it."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from aggregation import dispatch
from aggregation.exports.stream import ExportOptions
from aggregation.exports.tasks import export_job_start
from tests.aggregation.conftest import annotate_ifs, project_make

pytestmark = [pytest.mark.redis]


def _queued(client, name: str) -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in client.lrange(name, 0, -1)]


def _export_and_save(django_capture_on_commit_callbacks) -> None:
    project, items, annotators = project_make(n_items=1, n_annotators=1)
    with django_capture_on_commit_callbacks(execute=True):
        export_job_start(project=project, user=None, options=ExportOptions(format="dpo"))
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        annotate_ifs(items[0], annotators[0], [(700, 200), (200, 700)])
        dispatch.on_annotations_changed(project_id=project.pk, item_ids=[items[0].pk])


@pytest.mark.django_db
def test_jobs_go_to_their_own_queue_when_it_is_set(queue, settings, django_capture_on_commit_callbacks):
    client, name = queue
    jobs = f"{name}-jobs"
    settings.CELERY_JOBS_QUEUE = jobs
    try:
        _export_and_save(django_capture_on_commit_callbacks)
        assert _queued(client, jobs) == ["aggregation.export_tasks.export_run"]
        follow_ups = _queued(client, name)
        assert "aggregation.items_dirty_recompute" in follow_ups, follow_ups
        assert "aggregation.export_tasks.export_run" not in follow_ups
    finally:
        client.delete(jobs)


@pytest.mark.django_db
def test_without_it_jobs_share_the_default_queue(queue, settings, django_capture_on_commit_callbacks):
    client, name = queue
    settings.CELERY_JOBS_QUEUE = ""
    _export_and_save(django_capture_on_commit_callbacks)
    queued = _queued(client, name)
    assert "aggregation.export_tasks.export_run" in queued
    assert "aggregation.items_dirty_recompute" in queued
