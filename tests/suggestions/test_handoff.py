"""Handoff to the LLM: only on enough blind evidence, by the project's rule; undo restores labelling."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from aggregation.models import ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.queue.services import assignment_claim_next
from projects.models import Membership, Project
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_apply, handoff_evaluate, handoff_undo
from suggestions.models import HandoffDecision
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def _project(*, blind_labels: int, agree: int, minimum: int = 20, unlabelled: int = 5, **settings) -> Project:
    """``blind_labels`` blind items labelled once (``agree`` of them as the LLM says) and unlabelled items."""
    project = ProjectFactory(blind_rate=1.0, overlap=1, handoff_minimum_blind_comparisons=minimum, **settings)
    person = UserFactory(username=f"h-{project.pk}")
    MembershipFactory(project=project, user=person)
    items = items_create(project, blind_labels + unlabelled)
    for index, item in enumerate(items):
        values = [(800, 100), (100, 800)] if index % 2 else None
        SuggestionFactory(item=item, preferred_position=0, values=values)
    for index, item in enumerate(items[:blind_labels]):
        label(project, item, person, 0 if index < agree else 1)
    suggestion_figures_recompute(project_id=project.pk)
    return project


def test_handoff_does_not_fire_below_the_minimum_even_at_full_agreement():
    project = _project(blind_labels=19, agree=19, handoff_trigger=Project.HandoffTrigger.AUTOMATIC)
    evaluation = handoff_evaluate(project_id=project.pk)
    project.refresh_from_db()

    assert evaluation["blind"] == {"value": 1.0, "n": 19, "ci": evaluation["blind"]["ci"]}
    assert evaluation["eligible"] is False
    assert evaluation["fired"] == "minimum_blind_comparisons"
    assert "1 more" in evaluation["explanation"]
    assert project.phase == Project.Phase.COLLECTING
    assert not ItemAggregate.objects.filter(project=project).exists()
    with pytest.raises(ValidationError, match="1 more needed"):
        handoff_apply(project=project)


def test_the_lower_bound_rule_is_stricter_than_the_point_rule():
    point = _project(blind_labels=20, agree=19, handoff_agreement_threshold=0.9)
    strict = _project(
        blind_labels=20, agree=19, handoff_agreement_threshold=0.9, handoff_rule=Project.HandoffRule.LOWER_BOUND
    )
    assert handoff_evaluate(project_id=point.pk)["eligible"] is True
    evaluation = handoff_evaluate(project_id=strict.pk)
    assert evaluation["eligible"] is False
    assert evaluation["measured"] < 0.9 <= evaluation["blind"]["value"]
    assert "lower bound" in evaluation["explanation"]


def test_eligibility_changes_are_recorded_once_each():
    project = _project(blind_labels=20, agree=20)
    handoff_evaluate(project_id=project.pk)
    handoff_evaluate(project_id=project.pk)
    decisions = list(HandoffDecision.objects.filter(project=project).values_list("action", flat=True))
    assert decisions == [HandoffDecision.Action.ELIGIBLE]
    stored = ProjectAggregate.objects.get(project=project).suggestions["handoff"]
    assert stored["eligible"] is True
    assert stored["threshold"] == project.handoff_agreement_threshold


def test_handoff_and_undo_round_trip():
    project = _project(blind_labels=20, agree=20, unlabelled=6)
    lead = UserFactory(username="handoff-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    annotator = UserFactory(username="late-annotator")
    MembershipFactory(project=project, user=annotator)

    decision = handoff_apply(project=project, user=lead)
    project.refresh_from_db()
    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
    assert project.phase == Project.Phase.HANDED_OFF
    assert decision.action == HandoffDecision.Action.HANDED_OFF
    assert decision.items_affected == 6 == handed.count()
    assert decision.decided_by == lead
    assert decision.figures["eligible"] is True
    # From the suggestion: its (μ, ν) when it has them, the documented defaults otherwise; all point at position 0.
    assert set(handed.values_list("best_position", flat=True)) == {0}
    assert ResponseAggregate.objects.filter(item__in=handed.values("item")).count() == 12
    assert set(
        ResponseAggregate.objects.filter(item__in=handed.values("item"), response__position=0).values_list("mu", "nu")
    ) == {(0.8, 0.1), (0.75, 0.05)}
    assert assignment_claim_next(project=project, annotator=annotator) is None

    with pytest.raises(ValidationError, match="not collecting"):
        handoff_apply(project=project, user=lead)

    undo = handoff_undo(project=project, user=lead)
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING
    assert undo.action == HandoffDecision.Action.UNDONE
    assert undo.items_affected == 6
    assert not ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).exists()
    assert not ResponseAggregate.objects.filter(item__project=project).exists()
    assert assignment_claim_next(project=project, annotator=annotator) is not None
    assert list(HandoffDecision.objects.filter(project=project).values_list("action", flat=True)[:2]) == [
        HandoffDecision.Action.UNDONE,
        HandoffDecision.Action.HANDED_OFF,
    ]


def test_automatic_trigger_hands_off_once_and_not_again_after_an_undo():
    project = _project(blind_labels=20, agree=20, handoff_trigger=Project.HandoffTrigger.AUTOMATIC)
    handoff_evaluate(project_id=project.pk)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    assert HandoffDecision.objects.filter(project=project, action=HandoffDecision.Action.HANDED_OFF).count() == 1

    handoff_undo(project=project, user=None)
    handoff_evaluate(project_id=project.pk)
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING


def test_undo_is_refused_when_nothing_was_handed_off():
    project = _project(blind_labels=2, agree=2)
    with pytest.raises(ValidationError, match="nothing to undo"):
        handoff_undo(project=project, user=None)


def test_partly_labelled_items_keep_their_human_aggregate():
    project = _project(blind_labels=20, agree=20, unlabelled=3)
    Project.objects.filter(pk=project.pk).update(overlap=2)
    project.refresh_from_db()

    decision = handoff_apply(project=project)

    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
    assert decision.items_affected == 3 == handed.count()
    assert set(handed.values_list("item__annotation_count", flat=True)) == {0}
    assert "20 partly labelled items keep their human aggregate" in decision.explanation
