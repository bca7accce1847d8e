"""A handed-off item's p_best and margin are the item figures of the same (μ, ν) given by one person."""

from __future__ import annotations

import pytest

from aggregation.models import ItemAggregate, Provenance
from aggregation.services import item_aggregates_recompute
from projects.models import Project
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_apply
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db

# Per-mille (μ, ν) per response: uneven, so p_best and margin differ from the defaults' and from a mirror image.
WITH_VALUES = [(700, 100), (300, 400)]
# What a suggestion without values stands for (suggestions.handoff DEFAULT_PREFERRED and DEFAULT_OTHER).
DEFAULTS = [(750, 50), (50, 750)]


def _handed_off(operator: str) -> tuple[ItemAggregate, ItemAggregate]:
    """The model_handoff aggregates of two items handed to the LLM: one whose suggestion has values, one without."""
    project = ProjectFactory(
        blind_rate=1.0, overlap=1, handoff_minimum_blind_comparisons=20, aggregation_operator=operator
    )
    person = UserFactory(username=f"hf-{project.pk}")
    MembershipFactory(project=project, user=person)
    items = items_create(project, 22)
    for item in items[:20]:
        SuggestionFactory(item=item, preferred_position=0)
        label(project, item, person, 0)
    SuggestionFactory(item=items[20], preferred_position=0, values=WITH_VALUES)
    SuggestionFactory(item=items[21], preferred_position=0)
    suggestion_figures_recompute(project_id=project.pk)

    handoff_apply(project=project)

    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
    return handed.get(item=items[20]), handed.get(item=items[21])


def _labelled_once(operator: str, values: list[tuple[int, int]]) -> ItemAggregate:
    """The human aggregate of an item one annotator labelled with ``values``."""
    project, items, annotators = project_make(n_items=1, n_annotators=1, aggregation_operator=operator)
    annotate_ifs(items[0], annotators[0], values)
    item_aggregates_recompute(project_id=project.pk)
    return ItemAggregate.objects.get(item=items[0])


@pytest.mark.parametrize("operator", Project.Operator.values)
def test_handoff_p_best_and_margin_equal_the_item_figures_of_the_same_values(operator):
    with_values, without_values = _handed_off(operator)

    for handed, values in ((with_values, WITH_VALUES), (without_values, DEFAULTS)):
        human = _labelled_once(operator, values)
        assert handed.margin == pytest.approx(human.margin, abs=1e-9)
        assert handed.p_best == pytest.approx(human.p_best, abs=1e-9)
        assert handed.best_position == human.best_position == 0
    # The two items really differ, so a constant could not pass.
    assert with_values.margin == pytest.approx(0.7)
    assert without_values.margin == pytest.approx(1.4)
