"""before_label shows and records; Accept fills from the suggestion's values or the documented defaults;
after_label shows nothing first and a resolution step only after a disagreeing save; failed suggestions never show;
a label saved after an exposure counts as shown."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import judgment
from annotation.models import Annotation, SuggestionExposure
from annotation.queue.services import assignment_claim_item
from annotation.saving import SaveRequest
from annotation.selectors import suggestion_visible_for
from annotation.services import annotation_save
from projects.models import Item, Project, Suggestion
from tests.annotation.conftest import ifs_form, item_url
from tests.factories import SuggestionFactory


def _accept_url(project, item):
    return reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk})


@pytest.fixture
def before_label(project):
    project.suggestion_display = Project.SuggestionDisplay.BEFORE_LABEL
    project.save(update_fields=["suggestion_display"])
    return project


@pytest.fixture
def after_label(project):
    project.suggestion_display = Project.SuggestionDisplay.AFTER_LABEL
    project.save(update_fields=["suggestion_display"])
    return project


def _criterion(project):
    return project.criteria.get()


def test_before_label_shows_label_in_display_terms_and_records_each_showing(before_label, annotator, annotator_client):
    item = Item.objects.filter(project=before_label).first()
    SuggestionFactory(item=item, preferred_position=1, rationale="Second is more complete.")
    html = annotator_client.get(item_url(before_label, item)).content.decode()
    order = assignment_claim_item(project=before_label, item=item, annotator=annotator).response_order
    expected_label = judgment.display_label(order.index(1))
    assert f"The LLM prefers <b>Response {expected_label}</b>" in html
    assert "Second is more complete." in html
    annotator_client.get(item_url(before_label, item))
    assert SuggestionExposure.objects.filter(item=item, kind="before_label").count() == 2


def test_accept_fills_from_the_suggestions_own_values(before_label, annotator, annotator_client):
    item = Item.objects.filter(project=before_label).first()
    SuggestionFactory(item=item, preferred_position=0, values=[(730, 120), (210, 640)])
    html = annotator_client.post(_accept_url(before_label, item)).content.decode()
    criterion = _criterion(before_label)
    assert re.search(rf'name="mu-0-{criterion.pk}"[^>]*value="730"', html)
    assert re.search(rf'name="nu-1-{criterion.pk}"[^>]*value="640"', html)
    assert 'name="accepted" value="1"' in html
    assert SuggestionExposure.objects.filter(item=item, kind="accept").count() == 1


def test_accept_without_values_uses_the_documented_defaults(before_label, annotator):
    from annotation.page.selectors import annotation_page_context

    item = Item.objects.filter(project=before_label).first()
    SuggestionFactory(item=item, preferred_position=1)
    assignment = assignment_claim_item(project=before_label, item=item, annotator=annotator)
    frame = annotation_page_context(
        project=before_label, item=item, annotator=annotator, assignment=assignment, accept_values=True
    )
    cells = {r.position: (r.cells[0].mu, r.cells[0].nu) for r in frame.responses}
    assert cells == {1: judgment.ACCEPT_DEFAULT_PREFERRED, 0: judgment.ACCEPT_DEFAULT_OTHER}


def test_accepted_save_is_recorded_and_shown(before_label, annotator, annotator_client):
    item = Item.objects.filter(project=before_label).first()
    SuggestionFactory(item=item, preferred_position=1)
    annotator_client.post(_accept_url(before_label, item))
    annotator_client.post(item_url(before_label, item), ifs_form(item, accepted="1"))
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert annotation.accepted_suggestion
    assert annotation.suggestion_shown
    assert annotation.revisions.get().suggestion_shown


def test_failed_suggestions_are_never_shown(before_label, annotator, annotator_client):
    item = Item.objects.filter(project=before_label).first()
    Suggestion.objects.create(
        item=item, status=Suggestion.Status.FAILED, rationale="FAILEDMARKER", failure_reason="timeout"
    )
    assert suggestion_visible_for(project=before_label, item=item, annotator=annotator) is None
    assert "FAILEDMARKER" not in annotator_client.get(item_url(before_label, item)).content.decode()
    assert annotator_client.post(_accept_url(before_label, item)).status_code == 404


def test_after_label_shows_nothing_first_then_resolution_on_disagreement(after_label, annotator, annotator_client):
    item = Item.objects.filter(project=after_label).first()
    SuggestionFactory(item=item, preferred_position=1, rationale="AFTERMARKER")
    assert "AFTERMARKER" not in annotator_client.get(item_url(after_label, item)).content.decode()
    assert annotator_client.post(_accept_url(after_label, item)).status_code == 404
    response = annotator_client.post(item_url(after_label, item), ifs_form(item, {0: (900, 0), 1: (0, 900)}))
    assert response.status_code == 302
    assert "stage=resolution" in response["Location"]
    html = annotator_client.get(response["Location"]).content.decode()
    assert "AFTERMARKER" in html
    assert "Keep my label" in html
    assert SuggestionExposure.objects.filter(item=item, kind="resolution").count() == 1
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert not annotation.suggestion_shown, "the first label was saved before anything was shown"
    changed = annotator_client.post(
        item_url(after_label, item), ifs_form(item, {0: (0, 900), 1: (900, 0)}, stage="resolution")
    )
    assert changed.status_code == 302
    annotation.refresh_from_db()
    assert annotation.suggestion_shown
    assert list(annotation.revisions.values_list("reason", flat=True)) == ["save", "resolution"]


def test_after_label_agreement_goes_straight_on(after_label, annotator, annotator_client):
    item = Item.objects.filter(project=after_label).first()
    SuggestionFactory(item=item, preferred_position=1, rationale="AFTERMARKER")
    response = annotator_client.post(item_url(after_label, item), ifs_form(item, {0: (0, 900), 1: (900, 0)}))
    assert "stage=resolution" not in response["Location"]
    assert "AFTERMARKER" not in annotator_client.get(item_url(after_label, item) + "?stage=resolution").content.decode()
    assert not SuggestionExposure.objects.filter(item=item).exists()


def test_ifs_ties_use_the_project_tolerance(after_label, annotator):
    item = Item.objects.filter(project=after_label).first()
    SuggestionFactory(item=item, preferred_position=-1)
    after_label.tie_tolerance = 0.1
    after_label.save(update_fields=["tie_tolerance"])
    assignment_claim_item(project=after_label, item=item, annotator=annotator)
    values = [
        {"response": 0, "criterion": "overall", "mu": 600, "nu": 100},
        {"response": 1, "criterion": "overall", "mu": 560, "nu": 100},
    ]
    annotation_save(project=after_label, item=item, annotator=annotator, save=SaveRequest(values=values))
    from annotation.selectors import resolution_needed

    assert not resolution_needed(project=after_label, item=item, annotator=annotator), "0.04 apart is a tie"


def test_a_label_saved_after_any_exposure_counts_as_shown(before_label, annotator, annotator_client):
    item = Item.objects.filter(project=before_label).first()
    SuggestionFactory(item=item)
    annotator_client.get(item_url(before_label, item))
    annotator_client.post(item_url(before_label, item), ifs_form(item))
    assert Annotation.objects.get(item=item, annotator=annotator).suggestion_shown
