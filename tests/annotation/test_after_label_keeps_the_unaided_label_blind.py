"""After-label mode: an item of the random blind sample never shows the model, not even at the resolution step; on
other items a person who switches to the model's answer at the resolution step keeps their first, unaided label as
the blind comparison (the switch is the shown one)."""

from __future__ import annotations

import pytest

from annotation.models import Annotation, SuggestionExposure
from projects.models import Item, Project
from suggestions.figures import comparisons_load, suggestion_figures_recompute
from tests.annotation.conftest import ifs_form, item_url
from tests.factories import SuggestionFactory

pytestmark = pytest.mark.django_db

PREFERS_0 = {0: (900, 0), 1: (0, 900)}
PREFERS_1 = {0: (0, 900), 1: (900, 0)}


@pytest.fixture
def after_label(project):
    project.suggestion_display = Project.SuggestionDisplay.AFTER_LABEL
    project.save(update_fields=["suggestion_display"])
    return project


def test_an_item_of_the_blind_sample_skips_the_resolution_step(after_label, annotator, annotator_client):
    item = Item.objects.filter(project=after_label).first()
    Item.objects.filter(pk=item.pk).update(is_blind=True, blind_inclusion_probability=0.5)
    item.refresh_from_db()
    SuggestionFactory(item=item, preferred_position=1, rationale="AFTERMARKER")
    response = annotator_client.post(item_url(after_label, item), ifs_form(item, PREFERS_0))
    assert response.status_code == 302
    assert "stage=resolution" not in response["Location"], "a disagreeing blind-sample label goes straight on"
    page = annotator_client.get(item_url(after_label, item) + "?stage=resolution").content.decode()
    assert "AFTERMARKER" not in page
    assert not SuggestionExposure.objects.filter(item=item).exists()
    comparisons = comparisons_load(project=after_label)
    assert comparisons.in_sample.tolist() == [True]
    assert comparisons.source.tolist() == ["random_sample"]


def test_switching_at_the_resolution_step_keeps_the_first_label_as_the_blind_comparison(
    after_label, annotator, annotator_client
):
    item = Item.objects.filter(project=after_label, is_blind=False).first()
    SuggestionFactory(item=item, preferred_position=1)
    first = annotator_client.post(item_url(after_label, item), ifs_form(item, PREFERS_0))
    assert "stage=resolution" in first["Location"]
    annotator_client.get(first["Location"])
    annotator_client.post(item_url(after_label, item), ifs_form(item, PREFERS_1, stage="resolution"))
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert annotation.suggestion_shown, "the switch was saved after the model was shown"

    comparisons = comparisons_load(project=after_label)
    blind, shown = ~comparisons.shown, comparisons.shown
    assert comparisons.human[blind].tolist() == [0], "the unaided label, which disagreed"
    assert comparisons.human[shown].tolist() == [1], "the switched label, which agrees"
    figures = suggestion_figures_recompute(project_id=after_label.pk)
    assert figures["blind_sources"]["after_label"]["n"] == 1
    assert figures["unaided"]["agreement"]["n"] == 1
    assert figures["blind"]["agreement"]["n"] == 0, "not an item of the random blind sample"
