"""With a real Redis broker and a real Celery worker: saves reach the aggregates, even across a worker outage,
and a duplicated message gives one correct result."""

from __future__ import annotations

import time

import pytest
from django.db import transaction

from aggregation import dispatch, tasks
from aggregation.models import ItemAggregate, ProjectAggregate, ResponseAggregate
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.processes import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def _save(item, annotator, values) -> None:
    with transaction.atomic():
        annotate_ifs(item, annotator, values)
        dispatch.on_annotations_changed(project_id=item.project_id, item_ids=[item.pk])


def test_a_saved_annotation_reaches_its_aggregate(worker):
    project, items, annotators = project_make(n_items=2, n_annotators=2)

    _save(items[0], annotators[0], [(800, 100), (100, 800)])
    _save(items[0], annotators[1], [(700, 200), (200, 700)])

    wait_for(
        lambda: ItemAggregate.objects.filter(item=items[0], n_annotators=2).exists(), "the item aggregate", worker.log
    )
    assert ItemAggregate.objects.get(item=items[0]).best_position == 0
    wait_for(
        lambda: ProjectAggregate.objects.filter(project=project, progress__labels_total=2).exists(),
        "the debounced project figures",
        worker.log,
    )


def test_work_saved_while_the_worker_is_down_is_done_when_it_returns(worker):
    project, items, annotators = project_make(n_items=1, n_annotators=1)
    worker.stop()

    _save(items[0], annotators[0], [(100, 800), (900, 0)])
    time.sleep(1)
    assert not ItemAggregate.objects.filter(item=items[0]).exists()

    worker.start()
    wait_for(lambda: ItemAggregate.objects.filter(item=items[0]).exists(), "the queued recomputation", worker.log)
    assert ItemAggregate.objects.get(item=items[0]).best_position == 1
    wait_for(lambda: ProjectAggregate.objects.filter(project=project).exists(), "the project figures", worker.log)
    # And reconciliation, sent by beat in production, agrees that nothing is stale any more.
    tasks.aggregates_reconcile.delay()
    wait_for(
        lambda: not ItemAggregate.objects.filter(item=items[0], source_updated_at__isnull=True).exists(),
        "reconciliation",
        worker.log,
    )


def test_the_same_task_twice_gives_one_correct_result(worker):
    project, items, annotators = project_make(n_items=1, n_annotators=2)
    with transaction.atomic():
        annotate_ifs(items[0], annotators[0], [(600, 300), (200, 500)])
        annotate_ifs(items[0], annotators[1], [(800, 100), (400, 400)])

    tasks.item_aggregates.delay(project.pk, [items[0].pk])
    tasks.item_aggregates.delay(project.pk, [items[0].pk])
    tasks.project_recompute.delay(project.pk)  # queued behind both: when its figures exist, both have run

    wait_for(lambda: ProjectAggregate.objects.filter(project=project).exists(), "the three tasks", worker.log)
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
