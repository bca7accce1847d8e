"""Aggregates the handoff wrote for unlabelled items survive recomputation; a human label replaces them."""

from __future__ import annotations

import pytest
from django.utils import timezone

from aggregation import services
from aggregation.models import ItemAggregate, Provenance, ResponseAggregate
from projects.models import Project
from tests.aggregation.conftest import annotate_ifs, project_make


def _handoff_aggregate(item) -> None:
    ItemAggregate.objects.create(
        project_id=item.project_id,
        item=item,
        provenance=Provenance.MODEL_HANDOFF,
        operator="weighted_mean",
        best_position=1,
        computed_at=timezone.now(),
    )
    for response in item.responses.all():
        ResponseAggregate.objects.create(
            item=item, response=response, criterion=None, operator="weighted_mean", mu=0.5, nu=0.2
        )


@pytest.mark.django_db
def test_model_handoff_aggregates_of_unlabelled_items_are_kept():
    project, items, annotators = project_make(n_items=2, n_annotators=1, phase=Project.Phase.HANDED_OFF)
    _handoff_aggregate(items[0])
    _handoff_aggregate(items[1])
    annotate_ifs(items[1], annotators[0], [(900, 0), (0, 900)])

    services.item_aggregates_recompute(project_id=project.pk)
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk])

    kept = ItemAggregate.objects.get(item=items[0])
    assert kept.provenance == Provenance.MODEL_HANDOFF
    assert kept.best_position == 1
    assert ResponseAggregate.objects.filter(item=items[0]).count() == 2
    replaced = ItemAggregate.objects.get(item=items[1])
    assert replaced.provenance == Provenance.HUMAN
    assert replaced.best_position == 0
    assert ResponseAggregate.objects.filter(item=items[1]).count() == 2 * 2 * 3
