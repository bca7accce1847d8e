"""Adaptive overlap on a project: hesitant and disputed items get extra labels (most uncertain first, within the
budget), the queue serves them before untouched items, a named expert gets them alone, and the figures count what
the extra labels spent and changed."""

from __future__ import annotations

import pytest

from aggregation import services
from aggregation.models import ItemAggregate, ProjectAggregate
from annotation.models import ItemEscalation
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import TIE, Membership, Project
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.factories import ItemFactory, MembershipFactory, UserFactory

HESITANT = [(200, 100), (100, 200)]  # π = 0.7 on both responses
CLEAR = [(800, 100), (100, 800)]
OTHER_WAY = [(100, 800), (800, 100)]


@pytest.fixture
def world(db):
    project, items, (first, second, third) = project_make(
        n_items=6, n_annotators=3, overlap=2, adaptive_cap=2, adaptive_budget=3
    )
    for n, item in enumerate(items):
        if n < 2:
            annotate_ifs(item, first, HESITANT)
            annotate_ifs(item, second, HESITANT)
        elif n < 4:  # confident, opposite: disputed
            annotate_ifs(item, first, CLEAR)
            annotate_ifs(item, second, OTHER_WAY)
        else:
            annotate_ifs(item, first, CLEAR)
            annotate_ifs(item, second, CLEAR)
    services.project_aggregates_recompute(project_id=project.pk)
    return project, items, third


def test_the_budget_goes_to_the_most_uncertain_items(world):
    project, items, _ = world
    escalated = dict(ItemEscalation.objects.filter(project=project).values_list("item_id", "reason"))
    # Disputed items (agreement 0.15) are more urgent than hesitant ones (π 0.7); the budget of 3 stops the third.
    assert escalated[items[2].pk] == escalated[items[3].pk] == "disputed"
    assert len(escalated) == 3
    assert sum(1 for reason in escalated.values() if reason == "hesitant") == 1
    assert items[4].pk not in escalated
    assert items[5].pk not in escalated
    assert set(ItemEscalation.objects.values_list("wanted", flat=True)) == {3}


def test_the_queue_serves_escalated_items_before_fresh_ones(world):
    project, _, third = world
    fresh = ItemFactory(project=project)
    claim = assignment_claim_next(project=project, annotator=third)
    assert claim.item_id in set(ItemEscalation.objects.values_list("item_id", flat=True))
    assert claim.item_id != fresh.pk


def test_a_named_expert_gets_them_alone(world):
    project, _, third = world
    expert = UserFactory(username="expert")
    MembershipFactory(project=project, user=expert, role=Membership.Role.ANNOTATOR)
    ItemEscalation.objects.update(expert=expert)
    fresh = ItemFactory(project=project)
    assert assignment_claim_next(project=project, annotator=third).item_id == fresh.pk
    escalated = set(ItemEscalation.objects.values_list("item_id", flat=True))
    assert assignment_claim_next(project=project, annotator=expert).item_id in escalated


def test_the_figures_count_labels_spent_and_what_they_changed(world):
    project, items, third = world
    disputed = ItemEscalation.objects.get(item=items[2])
    # One confident judgment each way: a tie before the extra label.
    assert disputed.before_preferred == TIE
    ItemEscalation.objects.exclude(item=items[2]).update(wanted=0)
    assert assignment_claim_next(project=project, annotator=third).item_id == items[2].pk
    values = [
        {"response": 0, "criterion": "overall", "mu": 900, "nu": 50},
        {"response": 1, "criterion": "overall", "mu": 50, "nu": 900},
    ]
    annotation_save(project=project, item=items[2], annotator=third, save=SaveRequest(values=values))
    # What the dispatch does after the save's commit, which a test transaction never reaches.
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[items[2].pk])
    services.project_aggregates_recompute(project_id=project.pk)
    assert ItemAggregate.objects.get(item=items[2]).best_position == 0
    adaptive = ProjectAggregate.objects.get(project=project).study["adaptive"]
    assert adaptive["spent"] == 1
    assert adaptive["items_with_new_labels"] == 1
    assert adaptive["granted"] == 3
    # The tie became a preference: firmed up, not flipped.
    assert (adaptive["flipped"], adaptive["firmed"], adaptive["weakened"], adaptive["unchanged"]) == (0, 1, 0, 0)


def test_off_by_default(db):
    project, items, (first, second, _) = project_make(n_items=2, n_annotators=3, overlap=2)
    assert Project._meta.get_field("adaptive_cap").default == 0
    for item in items:
        annotate_ifs(item, first, CLEAR)
        annotate_ifs(item, second, OTHER_WAY)
    services.project_aggregates_recompute(project_id=project.pk)
    assert not ItemEscalation.objects.exists()
