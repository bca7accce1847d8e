"""Handoff asks first: its page counts what it would hand over and keep; afterwards annotators read that it paused."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from aggregation.models import ItemAggregate
from projects.models import Project
from suggestions.handoff import handoff_apply, handoff_preview
from suggestions.models import HandoffDecision
from tests.conftest import _logged_in
from tests.factories import UserFactory
from tests.suggestions.helpers import handoff_eligible_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def eligible() -> tuple[Project, Client, Client]:
    """20 blind items labelled once of overlap 2 (partly labelled), 5 unlabelled with and 2 without a suggestion."""
    lead, person, waiting = (UserFactory(username=n) for n in ("lead-h", "ann-h", "waiting-h"))
    project = handoff_eligible_project(lead=lead, labeller=person, others=(waiting,))
    return project, _logged_in(lead), _logged_in(waiting)


def test_preview_counts_what_the_handoff_then_does(eligible):
    project, _, _ = eligible
    preview = handoff_preview(project=project)
    assert (preview.to_llm, preview.partly_labelled, preview.without_suggestion, preview.complete) == (5, 20, 2, 0)
    assert preview.stops_serving == 27
    assert preview.evaluation["eligible"] is True
    assert not ItemAggregate.objects.filter(project=project).exists()  # previewing changes nothing

    decision = handoff_apply(project=project)
    assert decision.items_affected == preview.to_llm
    assert "20 partly labelled items keep their human aggregate" in decision.explanation


def test_the_card_links_to_a_confirmation_page_that_changes_nothing(eligible):
    project, lead_client, _ = eligible
    url = reverse("suggestion_handoff", kwargs={"project_id": project.pk})
    card = lead_client.get(reverse("suggestion_card", kwargs={"project_id": project.pk})).content.decode()
    assert f'href="{url}"' in card

    page = lead_client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert '<b id="handoff-to-llm">5</b>' in html
    assert '<b id="handoff-partly">20</b>' in html
    assert '<b id="handoff-no-suggestion">2</b>' in html
    assert "Hand off 5 items and pause labelling" in html
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING
    assert not HandoffDecision.objects.filter(project=project, action=HandoffDecision.Action.HANDED_OFF).exists()

    lead_client.post(url)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF


def test_annotators_read_that_labelling_is_paused(eligible):
    project, lead_client, waiting_client = eligible
    home = waiting_client.get(reverse("home")).content.decode()
    assert "27</b> still open for you" in home
    assert "Start annotating" in home

    lead_client.post(reverse("suggestion_handoff", kwargs={"project_id": project.pk}))

    home = waiting_client.get(reverse("home")).content.decode()
    assert "Labelling is paused: the lead handed the remaining items to the LLM" in home
    assert "still open for you" not in home
    assert "Start annotating" not in home
    assert "Continue annotating" not in home
    queue = waiting_client.get(reverse("annotate_next", kwargs={"project_id": project.pk})).content.decode()
    assert "Labelling is paused:" in queue
    assert "has all the labels it needs" not in queue


def test_only_leads_reach_the_confirmation(eligible, annotator_client, outsider_client):
    project, _, waiting_client = eligible
    url = reverse("suggestion_handoff", kwargs={"project_id": project.pk})
    for client in (waiting_client, outsider_client):
        assert client.get(url).status_code == 404
        assert client.post(url).status_code == 404
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING


def test_a_refused_rule_offers_no_button(lead_client, project):
    html = lead_client.get(reverse("suggestion_handoff", kwargs={"project_id": project.pk})).content.decode()
    assert "The handoff rule is not met" in html
    assert "handoff-confirm-button" not in html
