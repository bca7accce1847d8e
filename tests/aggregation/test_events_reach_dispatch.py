"""Writers announce through config.events; aggregation, connected at startup, reacts as a direct dispatch call did."""

from __future__ import annotations

import pytest
from django.db import transaction

from aggregation import receivers
from aggregation.models import ItemAggregate, ProjectAggregate
from config import events
from tests.aggregation.conftest import annotate_ifs, dispatched, project_make


def test_every_event_has_aggregation_listening_once_django_is_ready() -> None:
    receivers.connect()  # a second connect (ready() run twice) must not double the work
    counts = {name: len(signal.receivers) for name, signal in events.EVENTS.items()}

    # One listener each; the figures' recompute also tells the webhooks (a project reaching its target).
    assert counts == {**dict.fromkeys(events.EVENTS, 1), "figures_recomputed": 2}


@pytest.mark.django_db
def test_labels_changed_recomputes_the_item_and_project_after_commit(django_capture_on_commit_callbacks):
    project, items, annotators = project_make(n_items=2, n_annotators=2)

    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        annotate_ifs(items[0], annotators[0], [(800, 100), (100, 800)])
        events.labels_changed(project_id=project.pk, item_ids=[items[0].pk])

    assert dispatched(callbacks) == 1
    assert ItemAggregate.objects.get(item=items[0]).best_position == 0
    assert not ItemAggregate.objects.filter(item=items[1]).exists()
    assert ProjectAggregate.objects.get(project=project).progress["labels_total"] == 1


@pytest.mark.django_db
def test_items_imported_refreshes_the_project_figures_after_commit(django_capture_on_commit_callbacks):
    project, items, annotators = project_make(n_items=1, n_annotators=1)
    annotate_ifs(items[0], annotators[0], [(800, 100), (100, 800)])

    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        events.items_imported(project_id=project.pk)

    assert dispatched(callbacks) == 1
    assert ProjectAggregate.objects.get(project=project).progress["labels_total"] == 1


@pytest.mark.django_db
def test_nothing_happens_when_the_announcing_transaction_rolls_back(django_capture_on_commit_callbacks):
    project, _, _ = project_make(n_items=1, n_annotators=1)

    def failing_write() -> None:
        with transaction.atomic():
            events.settings_changed(project_id=project.pk)
            raise RuntimeError("the write failed")

    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(RuntimeError):
        failing_write()

    assert callbacks == []
    assert not ProjectAggregate.objects.filter(project=project).exists()
