"""The project figures follow saves within about a second, unless the last project run was long: then the next
waits four times that run (project runs take at most a fifth of a worker), never more than a minute."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from django.db import transaction
from django.test import override_settings

from aggregation import dirty, dispatch
from tests.aggregation.conftest import annotate_ifs, project_make


def test_delay_is_the_setting_until_runs_get_long():
    with override_settings(AGGREGATION_PROJECT_DELAY=1):
        assert dispatch.project_delay(last_seconds=None) == 1
        assert dispatch.project_delay(last_seconds=0.05) == 1
        assert dispatch.project_delay(last_seconds=2.5) == 10
        assert dispatch.project_delay(last_seconds=3600) == dispatch.PROJECT_DELAY_LONGEST
    with override_settings(AGGREGATION_PROJECT_DELAY=30):
        assert dispatch.project_delay(last_seconds=2.5) == 30


def _countdown_of_queued_project_run(client, name: str) -> float:
    for raw in client.lrange(name, 0, -1):
        message = json.loads(raw)
        if message["headers"]["task"] == "aggregation.project_recompute":
            eta = datetime.fromisoformat(message["headers"]["eta"])
            return (eta - datetime.now(eta.tzinfo)).total_seconds()
    raise AssertionError("no project run queued")


@pytest.mark.redis
@pytest.mark.django_db
@override_settings(AGGREGATION_PROJECT_DELAY=1)
def test_a_long_last_run_spaces_the_next_one(queue, django_capture_on_commit_callbacks):
    client, name = queue
    quick, quick_items, quick_annotators = project_make(n_items=1, n_annotators=1)
    slow, slow_items, slow_annotators = project_make(n_items=1, n_annotators=1)
    dirty.project_seconds_record(project_id=slow.pk, seconds=5.0)  # as the task records after a run

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        annotate_ifs(quick_items[0], quick_annotators[0], [(700, 200), (200, 700)])
        dispatch.on_annotations_changed(project_id=quick.pk, item_ids=[quick_items[0].pk])
    assert 0 < _countdown_of_queued_project_run(client, name) <= 1.5
    client.delete(name)

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        annotate_ifs(slow_items[0], slow_annotators[0], [(700, 200), (200, 700)])
        dispatch.on_annotations_changed(project_id=slow.pk, item_ids=[slow_items[0].pk])
    assert 19 <= _countdown_of_queued_project_run(client, name) <= 20.5
