"""Binary and Likert labels aggregate through the signed preference; they get no invented IFS values."""

from __future__ import annotations

import pytest

from aggregation import services
from aggregation.models import ItemAggregate, ProjectAggregate, ResponseAggregate
from projects.models import TIE, Project
from tests.aggregation.conftest import annotate_binary, annotate_likert, project_make


@pytest.mark.django_db
def test_binary_choices_give_the_mean_signed_preference():
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=2)
    for annotator, choice in zip(annotators, [0, 0, 1], strict=True):
        annotate_binary(items[0], annotator, choice)
    for annotator, choice in zip(annotators, [1, TIE, 0], strict=True):
        annotate_binary(items[1], annotator, choice)

    services.item_aggregates_recompute(project_id=project.pk)

    first = ItemAggregate.objects.get(item=items[0])
    mean_s = (1 + 1 - 1) / 3
    assert first.signed_preference == pytest.approx(mean_s)
    assert first.best_position == 0
    assert first.worst_position == 1
    assert first.p_best == pytest.approx(0.5 + mean_s / 2)
    assert first.margin == pytest.approx(2 * mean_s)
    assert first.hesitation is None
    # Choices 0, 0, 1: one agreeing pair of three.
    assert first.agreement == pytest.approx(1 / 3)
    assert first.vote_tie is False
    assert first.n_annotators == 3
    second = ItemAggregate.objects.get(item=items[1])
    assert second.signed_preference == pytest.approx(0.0)
    assert second.best_position == TIE
    assert second.agreement == pytest.approx(0.0)
    assert second.vote_tie is True
    assert not ResponseAggregate.objects.exists()


@pytest.mark.django_db
def test_likert_values_map_onto_the_scale():
    project, items, annotators = project_make(mode=Project.Mode.LIKERT, n_items=1, likert_points=7)
    values = [1, 2, 6]  # 1 = position 0 strongly preferred; centre 4, half-range 3
    for annotator, value in zip(annotators, values, strict=True):
        annotate_likert(items[0], annotator, value)

    services.item_aggregates_recompute(project_id=project.pk)

    aggregate = ItemAggregate.objects.get(item=items[0])
    expected = sum((4 - v) / 3 for v in values) / 3
    assert aggregate.signed_preference == pytest.approx(expected)
    assert aggregate.best_position == 0
    assert aggregate.p_best == pytest.approx(0.5 + expected / 2)


@pytest.mark.django_db
def test_binary_project_agreement_and_weights_are_computed():
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=4)
    # Annotators 0 and 1 always agree, annotator 2 always disagrees with them.
    for item in items:
        annotate_binary(item, annotators[0], 0)
        annotate_binary(item, annotators[1], 0)
        annotate_binary(item, annotators[2], 1)

    services.project_aggregates_recompute(project_id=project.pk)

    agreement = ProjectAggregate.objects.get(project=project).agreement
    # Per item 3 pairs, 1 agreeing.
    assert agreement["pairwise_with_ties"]["value"] == pytest.approx(1 / 3)
    assert agreement["pairwise_with_ties"]["n"] == 12
    assert agreement["ifs"]["value"] is None
    weights = {row.annotator_id: row for row in project.annotator_aggregates.all()}
    assert weights[annotators[0].pk].weight > weights[annotators[2].pk].weight
