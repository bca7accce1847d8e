"""Saves mark their items dirty in Redis and send one item task per project, however many saves come before it
runs; that task recomputes every item gathered and empties the set."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from aggregation import dispatch, tasks
from aggregation.models import ItemAggregate
from tests.aggregation.conftest import annotate_ifs, project_make

pytestmark = [pytest.mark.redis]


def _queued_tasks(client, name: str) -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in client.lrange(name, 0, -1)]


def _save(item, annotator, values) -> None:
    with transaction.atomic():
        annotate_ifs(item, annotator, values)
        dispatch.on_annotations_changed(project_id=item.project_id, item_ids=[item.pk])


@pytest.mark.django_db
def test_many_saves_queue_one_item_task_that_recomputes_them_all(queue, django_capture_on_commit_callbacks):
    client, name = queue
    project, items, annotators = project_make(n_items=4, n_annotators=2)
    with django_capture_on_commit_callbacks(execute=True):
        for item in items:
            for annotator in annotators:
                _save(item, annotator, [(700, 200), (200, 700)])

    queued = _queued_tasks(client, name)
    assert queued.count("aggregation.items_dirty_recompute") == 1, queued
    assert queued.count("aggregation.project_recompute") == 1, queued
    assert "aggregation.item_aggregates" not in queued

    assert tasks.items_dirty_recompute(project.pk) == 4
    assert ItemAggregate.objects.filter(item__in=items).count() == 4
    assert tasks.items_dirty_recompute(project.pk) == 0, "the set was emptied by the run"

    # The run cleared the pending flag: the next save sends a task again.
    with django_capture_on_commit_callbacks(execute=True):
        _save(items[0], annotators[0], [(100, 800), (800, 100)])
    assert _queued_tasks(client, name).count("aggregation.items_dirty_recompute") == 2
