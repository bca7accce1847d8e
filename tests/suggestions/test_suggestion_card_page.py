"""The lead's suggestion card: who may see it, what it shows, and its buttons."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from projects.models import Job, Project
from suggestions.figures import suggestion_figures_recompute
from suggestions.models import HandoffDecision
from tests.factories import ItemFactory, SuggestionFactory
from tests.suggestions.helpers import label

pytestmark = pytest.mark.django_db


def _url(project, name="suggestion_card"):
    return reverse(name, args=[project.pk])


def test_lead_sees_the_card_annotator_and_outsider_get_404(project, lead_client, annotator_client, outsider_client):
    assert lead_client.get(_url(project)).status_code == 200
    assert annotator_client.get(_url(project)).status_code == 404
    assert outsider_client.get(_url(project)).status_code == 404


def test_only_leads_may_post(project, annotator_client, outsider_client):
    for client in (annotator_client, outsider_client):
        for name in ("suggestion_handoff", "suggestion_handoff_undo", "suggestion_generate"):
            assert client.post(_url(project, name)).status_code == 404
    assert not HandoffDecision.objects.filter(project=project).exists()
    assert not Job.objects.filter(project=project).exists()


def test_empty_state_before_any_suggestion(project, lead_client):
    page = lead_client.get(_url(project)).content.decode()
    assert "No suggestions yet" in page
    assert "No LLM endpoint configured" in page


def _labelled(project, annotator, annotator2, *, blind: int, shown: int) -> None:
    # The blind labels are on items of the random blind sample: the only ones blind agreement is estimated from.
    items = [ItemFactory(project=project, is_blind=index < blind) for index in range(blind + shown)]
    for index, item in enumerate(items):
        SuggestionFactory(item=item, preferred_position=0)
        is_shown = index >= blind
        label(project, item, annotator, 0, shown=is_shown, accepted=is_shown)
        label(project, item, annotator2, 0 if is_shown or index % 2 else 1, shown=is_shown)


def test_figures_gap_hint_and_handoff_state_are_shown(project, lead_client, annotator, annotator2):
    _labelled(project, annotator, annotator2, blind=6, shown=6)
    suggestion_figures_recompute(project_id=project.pk)
    from suggestions.handoff import handoff_evaluate

    handoff_evaluate(project_id=project.pk)
    page = lead_client.get(_url(project)).content.decode()

    assert "<svg" in page
    assert "interval-plot" in page
    assert "Anchoring gap" in page
    assert "The suggestion pulls annotators" in page  # shown 1.0 against blind 0.75
    assert "after_label" in page
    assert "Accept button: <strong>6</strong>" in page
    assert "Not eligible: 12 blind comparisons" in page
    assert "Hand off the remaining items" not in page


def test_gap_waits_for_five_comparisons_per_side(project, lead_client, annotator, annotator2):
    _labelled(project, annotator, annotator2, blind=1, shown=2)
    suggestion_figures_recompute(project_id=project.pk)
    page = lead_client.get(_url(project)).content.decode()
    assert "3 more blind, 1 more shown" in page


def test_handoff_and_undo_buttons(project, lead_client, annotator, annotator2):
    project.handoff_minimum_blind_comparisons = 4
    project.handoff_agreement_threshold = 0.5
    project.save()
    _labelled(project, annotator, annotator2, blind=4, shown=0)
    suggestion_figures_recompute(project_id=project.pk)
    from suggestions.handoff import handoff_evaluate

    handoff_evaluate(project_id=project.pk)
    assert "Hand off the remaining items" in lead_client.get(_url(project)).content.decode()

    response = lead_client.post(_url(project, "suggestion_handoff"), follow=True)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    assert "Undo handoff" in response.content.decode()

    lead_client.post(_url(project, "suggestion_handoff_undo"))
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING


def test_a_refused_handoff_says_why(project, lead_client):
    response = lead_client.post(_url(project, "suggestion_handoff"), follow=True)
    assert "Handoff refused" in response.content.decode()
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING


def test_a_running_job_polls_its_progress(project, lead, lead_client, settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = "judge"
    Job.objects.create(project=project, kind=Job.Kind.SUGGEST, status=Job.Status.RUNNING, progress_total=6)
    page = lead_client.get(_url(project), headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 1s"' in page
    assert "<html" not in page  # the fragment alone


def test_the_card_reads_a_fixed_number_of_queries(project, lead_client, annotator, annotator2):
    _labelled(project, annotator, annotator2, blind=2, shown=2)
    suggestion_figures_recompute(project_id=project.pk)
    lead_client.get(_url(project))  # both measured requests find the signed-in user in the cache (config.auth)
    with CaptureQueriesContext(connection) as small:
        lead_client.get(_url(project))
    _labelled(project, annotator, annotator2, blind=8, shown=8)
    suggestion_figures_recompute(project_id=project.pk)
    with CaptureQueriesContext(connection) as large:
        lead_client.get(_url(project))
    assert len(large) == len(small)
