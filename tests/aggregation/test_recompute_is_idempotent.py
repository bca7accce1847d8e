"""Recomputing twice leaves the same rows: no duplicates, same values, same primary keys for upserted tables."""

from __future__ import annotations

import pytest

from aggregation import services
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, ResponseAggregate
from annotation.models import JudgmentValue
from tests.aggregation.conftest import annotate_ifs, project_make


def _snapshot():
    return (
        sorted(
            ItemAggregate.objects.values_list("pk", "item_id", "best_position", "p_best", "agreement", "n_annotators")
        ),
        sorted(
            ResponseAggregate.objects.values_list("response_id", "criterion_id", "operator", "mu", "nu"),
            key=lambda row: (row[0], row[1] or 0, row[2]),
        ),
        sorted(AnnotatorAggregate.objects.values_list("pk", "annotator_id", "weight", "expertise", "agreement")),
        list(ProjectAggregate.objects.values_list("pk", "agreement", "progress")),
    )


@pytest.mark.django_db
@pytest.mark.parametrize("copy_threshold", [services.COPY_THRESHOLD, 1], ids=["bulk_create", "copy_on_postgresql"])
def test_running_everything_twice_changes_nothing(copy_threshold, monkeypatch):
    monkeypatch.setattr(services, "COPY_THRESHOLD", copy_threshold)
    project, items, annotators = project_make(criteria=(("a", 0.5), ("b", 0.5)), n_items=4)
    for i, item in enumerate(items):
        for k, annotator in enumerate(annotators):
            annotate_ifs(item, annotator, [[(100 * (i + k) % 900, 50), (300, 200)], [(200, 100 * k), (500, 500)]])

    services.project_aggregates_recompute(project_id=project.pk)
    services.item_aggregates_recompute(project_id=project.pk)
    first = _snapshot()
    services.project_aggregates_recompute(project_id=project.pk)
    services.item_aggregates_recompute(project_id=project.pk)
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk, items[0].pk])

    assert _snapshot() == first
    assert ItemAggregate.objects.count() == 4
    assert ResponseAggregate.objects.count() == 4 * 2 * 3 * 3  # items × responses × (criteria + overall) × operators
    assert AnnotatorAggregate.objects.count() == 3
    assert ProjectAggregate.objects.count() == 1


@pytest.mark.django_db
def test_an_item_whose_labels_are_gone_loses_its_human_aggregate():
    project, items, annotators = project_make(n_items=2, n_annotators=1)
    annotation = annotate_ifs(items[0], annotators[0], [(800, 100), (200, 700)])
    annotate_ifs(items[1], annotators[0], [(800, 100), (200, 700)])
    services.item_aggregates_recompute(project_id=project.pk)

    annotation.delete()
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk])

    assert not ItemAggregate.objects.filter(item=items[0]).exists()
    assert not ResponseAggregate.objects.filter(item=items[0]).exists()
    assert ItemAggregate.objects.filter(item=items[1]).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("copy_threshold", [services.COPY_THRESHOLD, 1], ids=["bulk_create", "copy_on_postgresql"])
def test_changed_values_are_rewritten_and_vanished_cells_removed(copy_threshold, monkeypatch):
    monkeypatch.setattr(services, "COPY_THRESHOLD", copy_threshold)
    project, items, annotators = project_make(criteria=(("a", 0.5), ("b", 0.5)), n_items=2, n_annotators=1)
    for item in items:
        annotate_ifs(item, annotators[0], [[(800, 100), (600, 200)], [(100, 800), (300, 300)]])
    services.item_aggregates_recompute(project_id=project.pk)
    criterion_a, criterion_b = project.criteria.order_by("position")

    # Item 0 loses its judgments under criterion b; item 1 changes one value under a.
    JudgmentValue.objects.filter(annotation__item=items[0], criterion=criterion_b).delete()
    JudgmentValue.objects.filter(annotation__item=items[1], criterion=criterion_a, response__position=0).update(
        mu=500, nu=500
    )
    services.item_aggregates_recompute(project_id=project.pk)

    # Without b the overall value of item 0 is undefined: only the a rows remain.
    remaining = set(ResponseAggregate.objects.filter(item=items[0]).values_list("criterion_id", flat=True))
    assert remaining == {criterion_a.pk}
    assert ResponseAggregate.objects.filter(item=items[0]).count() == 2 * 3
    changed = ResponseAggregate.objects.get(
        item=items[1], criterion=criterion_a, operator="weighted_mean", response__position=0
    )
    assert (changed.mu, changed.nu) == pytest.approx((0.5, 0.5))
    overall = ResponseAggregate.objects.get(
        item=items[1], criterion=None, operator="weighted_mean", response__position=0
    )
    # Position 0: a = (0.5, 0.5) now, b = (0.6, 0.2) unchanged; equal criterion weights.
    assert (overall.mu, overall.nu) == pytest.approx((0.5 * 0.5 + 0.5 * 0.6, 0.5 * 0.5 + 0.5 * 0.2))
    assert ResponseAggregate.objects.filter(item=items[1]).count() == 2 * 3 * 3


@pytest.mark.django_db
def test_items_of_another_project_or_none_are_ignored():
    project, _, _ = project_make(n_items=1, n_annotators=1)
    other, other_items, other_annotators = project_make(n_items=1, n_annotators=1)
    annotate_ifs(other_items[0], other_annotators[0], [(800, 100), (100, 800)])

    assert services.item_aggregates_recompute(project_id=project.pk, item_ids=[other_items[0].pk]) == 0
    assert services.item_aggregates_recompute(project_id=project.pk, item_ids=[]) == 0
    assert not ItemAggregate.objects.exists()
    assert services.item_aggregates_recompute(project_id=other.pk, item_ids=[other_items[0].pk]) == 1
