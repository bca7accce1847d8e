"""A save schedules recomputation only after its transaction commits, and a broker outage never fails it."""

from __future__ import annotations

import logging

import pytest
from django.db import transaction

from aggregation import dispatch, tasks
from aggregation.models import ItemAggregate, ProjectAggregate
from tests.aggregation.conftest import annotate_ifs, celery_configured, dispatched, project_make


def _save(item, annotator, values):
    with transaction.atomic():
        annotate_ifs(item, annotator, values)
        dispatch.on_annotations_changed(project_id=item.project_id, item_ids=[item.pk])


@pytest.mark.django_db
def test_committed_save_recomputes_item_and_project(django_capture_on_commit_callbacks):
    project, items, annotators = project_make(n_items=2, n_annotators=2)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        _save(items[0], annotators[0], [(800, 100), (100, 800)])

    assert dispatched(callbacks) == 1
    aggregate = ItemAggregate.objects.get(item=items[0])
    assert aggregate.best_position == 0
    assert not ItemAggregate.objects.filter(item=items[1]).exists()
    assert ProjectAggregate.objects.get(project=project).progress["labels_total"] == 1


@pytest.mark.django_db
def test_rolled_back_save_schedules_nothing(django_capture_on_commit_callbacks):
    _, items, annotators = project_make(n_items=1, n_annotators=1)

    def failing_save() -> None:
        with transaction.atomic():
            annotate_ifs(items[0], annotators[0], [(800, 100), (100, 800)])
            dispatch.on_annotations_changed(project_id=items[0].project_id, item_ids=[items[0].pk])
            raise RuntimeError("the save failed")

    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(RuntimeError):
        failing_save()

    assert callbacks == []
    assert not ItemAggregate.objects.exists()


@pytest.mark.django_db
def test_broker_down_keeps_the_save_and_reconciliation_catches_up(django_capture_on_commit_callbacks, caplog):
    project, items, annotators = project_make(n_items=1, n_annotators=1)
    caplog.set_level(logging.ERROR, logger="aggregation.dispatch")

    # Nothing listens on port 1: every publish fails at once.
    with (
        celery_configured(task_always_eager=False, broker_url="redis://127.0.0.1:1/0"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        _save(items[0], annotators[0], [(800, 100), (100, 800)])

    assert items[0].annotations.count() == 1
    assert not ItemAggregate.objects.exists()
    assert "reconciliation will" in caplog.text

    assert tasks.aggregates_reconcile() == {"items": 1, "projects": 1}
    assert ItemAggregate.objects.filter(item=items[0]).exists()
    assert ProjectAggregate.objects.filter(project=project).exists()
