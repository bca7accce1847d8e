"""When the audit suspends a handoff, the project's leads are told by email once the suspension commits (beside the
dashboard's handoff history): every lead with an address, nobody else, and nobody at all when the suspension is
rolled back."""

from __future__ import annotations

import pytest
from django.core import mail
from django.db import transaction

from annotation.models import LabelRequest
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership, Project
from suggestions.certification import labeling_figures_recompute
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_apply
from suggestions.models import HandoffDecision
from suggestions.requests import label_requests_draw
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def _handed_off_project_with_a_failing_audit() -> Project:
    project = ProjectFactory(
        name="Summaries", mode=Project.Mode.BINARY, blind_rate=1.0, overlap=1,
        handoff_minimum_blind_comparisons=20, handoff_agreement_threshold=0.8,
    )  # fmt: skip
    first = UserFactory(username=f"m{project.pk}-first", email="first@example.org")
    MembershipFactory(project=project, user=first)
    for name, email in (("ada", "ada@example.org"), ("bob", "bob@example.org"), ("cyd", "")):
        lead = UserFactory(username=f"m{project.pk}-{name}", email=email)
        MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    items = items_create(project, 50, prefix=f"m{project.pk}")
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[:20]:
        label(project, item, first, 0)
    labeling_figures_recompute(project_id=project.pk)
    suggestion_figures_recompute(project_id=project.pk)
    handoff_apply(project=project)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    for i in range(2):
        MembershipFactory(project=project, user=UserFactory(username=f"m{project.pk}-aud{i}", email=f"a{i}@x.org"))
    label_requests_draw(project=project, kind="audit", rate=1.0, labels_per_item=1)
    # The model's answers no longer hold: the auditors disagree with every one.
    for request in LabelRequest.objects.filter(project=project, kind="audit", status=LabelRequest.Status.OPEN):
        annotation_save(
            project=project, item=request.item, annotator=request.annotator, save=SaveRequest(binary_choice=1)
        )
    mail.outbox.clear()
    return project


def test_the_leads_with_an_address_get_one_email_after_commit(django_capture_on_commit_callbacks) -> None:
    project = _handed_off_project_with_a_failing_audit()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        labeling_figures_recompute(project_id=project.pk)
        assert mail.outbox == []  # not before the suspension commits
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING
    assert len(callbacks) >= 1
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert sorted(message.to) == ["ada@example.org", "bob@example.org"]
    assert "Summaries" in message.subject
    assert "suspended" in message.subject
    decision = HandoffDecision.objects.get(project=project, action=HandoffDecision.Action.SUSPENDED)
    assert decision.explanation in message.body
    assert f"/projects/{project.pk}/dashboard/" in message.body


class Abort(Exception):
    pass


def _recompute_then_roll_back(project_id: int) -> None:
    with transaction.atomic():
        labeling_figures_recompute(project_id=project_id)
        raise Abort


def test_a_suspension_that_is_rolled_back_tells_nobody(django_capture_on_commit_callbacks) -> None:
    project = _handed_off_project_with_a_failing_audit()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Abort):
        _recompute_then_roll_back(project.pk)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    assert mail.outbox == []
