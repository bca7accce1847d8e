"""Nothing of a blind item's suggestion reaches its annotator: not in a page, an HTMX fragment, a redirect target,
the Accept endpoint or an error page; before and after saving, after reload, after edit and through "previous".

Every blind item's suggestion carries unique markers in its rationale and model name; the walk collects every
response body the annotator can reach for those items and searches them. A shown item with the same kind of marker
is walked the same way and must show it, so the search itself is proven to work.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from annotation.models import Annotation, SuggestionExposure
from annotation.queue.services import assignment_claim_item
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.annotation.study_helpers import enter_url
from tests.factories import SuggestionFactory

# Words only the suggestion panel uses; none of them may appear on a blind item's pages.
PANEL_WORDS = ("suggestion-panel", "LLM prefers", "LLM suggestion", "accept-button", "Accept the LLM")


@pytest.fixture
def marked(project):
    items = list(Item.objects.filter(project=project).order_by("pk"))
    blind_items, shown_items = items[:3], items[3:]
    Item.objects.filter(pk__in=[i.pk for i in blind_items]).update(is_blind=True)
    Item.objects.filter(pk__in=[i.pk for i in shown_items]).update(is_blind=False)
    markers = {}
    for item in items:
        marker = f"MARK{item.pk:05d}Q"
        SuggestionFactory(
            item=item,
            preferred_position=1,
            rationale=f"Because {marker}-rationale",
            model_name=f"{marker}-model",
            values=[(111, 777), (777, 111)],
        )
        markers[item.pk] = marker
    return [Item.objects.get(pk=i.pk) for i in blind_items], [Item.objects.get(pk=i.pk) for i in shown_items], markers


def _walk(client, project, item):
    """Every body the annotator can reach for ``item``, as (what, text)."""
    url = item_url(project, item)
    htmx = {"HTTP_HX_REQUEST": "true"}
    bodies = []

    def grab(what, response):
        bodies.append((what, response.status_code, response.content.decode()))
        return response

    grab("page", client.get(url))
    grab("fragment", client.get(url, **htmx))
    grab("resolution stage asked for", client.get(url + "?stage=resolution"))
    accept = grab(
        "accept", client.post(reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk}))
    )
    grab(
        "accept fragment",
        client.post(reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk}), **htmx),
    )
    grab("refused save", client.post(url, ifs_form(item, {0: (900, 900)})))
    grab("refused save fragment", client.post(url, ifs_form(item, {0: (900, 900)}), **htmx))
    grab("save fragment", client.post(url, ifs_form(item, {0: (700, 100), 1: (100, 700)}), **htmx))
    saved = client.post(url, ifs_form(item, {0: (650, 100), 1: (100, 650)}))
    grab("save", saved)
    if saved.status_code == 302:
        grab("after save redirect", client.get(saved["Location"]))
    grab("reload after save", client.get(url))
    grab("reload fragment after save", client.get(url, **htmx))
    grab("resolution after save", client.get(url + "?stage=resolution"))
    grab("edit save fragment", client.post(url, ifs_form(item, {0: (100, 800), 1: (800, 100)}), **htmx))
    grab("reload after edit", client.get(url))
    previous = reverse("annotate_previous", kwargs={"project_id": project.pk})
    grab("previous", client.get(previous + f"?before={item.pk}", follow=True))
    grab("previous fragment", client.get(previous + f"?before={item.pk}", **htmx))
    grab("next", client.get(next_url(project)))
    grab("home", client.get(reverse("home")))
    return bodies, accept


def test_blind_items_leak_nothing_and_record_no_exposure(project, annotator, annotator_client, marked):
    blind_items, _shown, markers = marked
    for item in blind_items:
        bodies, accept = _walk(annotator_client, project, item)
        assert accept.status_code == 404, "Accept on a blind item is refused"
        for what, status, text in bodies:
            assert status < 500, what
            assert markers[item.pk] not in text, f"marker of blind item leaked in {what}"
            if f'data-item="{item.pk}"' in text:
                for word in PANEL_WORDS:
                    assert word not in text, f"suggestion panel on blind item in {what}"
        annotation = Annotation.objects.get(item=item, annotator=annotator)
        assert not annotation.suggestion_shown
        assert not annotation.accepted_suggestion
    assert not SuggestionExposure.objects.filter(item__in=blind_items).exists()


def test_the_same_walk_finds_the_marker_of_a_shown_item(project, annotator_client, marked):
    _, shown_items, markers = marked
    item = shown_items[0]
    bodies, accept = _walk(annotator_client, project, item)
    assert accept.status_code == 200
    found = [what for what, _, text in bodies if markers[item.pk] in text]
    assert "page" in found
    assert "fragment" in found
    assert "accept" in found
    assert SuggestionExposure.objects.filter(item=item, kind="accept").exists()


def test_blind_items_stay_blind_when_the_project_changes_display(project, annotator_client, marked):
    """Blindness belongs to the item in blind_sample mode; the other modes never show before a save either."""
    blind_items, _, markers = marked
    project.suggestion_display = Project.SuggestionDisplay.AFTER_LABEL
    project.save(update_fields=["suggestion_display"])
    item = blind_items[0]
    page = annotator_client.get(item_url(project, item)).content.decode()
    assert markers[item.pk] not in page


def test_a_study_participant_sees_nothing_of_blind_items_either(project, lead, marked):
    """A crowd participant is an annotator like any other: the same walk, from arrival by link to the end page."""
    blind_items, shown_items, markers = marked
    link = study_link_create(project=project, created_by=lead, name="Crowd")
    client = Client()
    arrival = client.get(enter_url(link, "pid-blind"), follow=True)
    assert arrival.status_code == 200
    participant = Participant.objects.get(external_id="pid-blind")
    for item in blind_items:
        bodies, accept = _walk(client, project, item)
        bodies.append(("arrival", arrival.status_code, arrival.content.decode()))
        assert accept.status_code == 404
        for what, status, text in bodies:
            assert status < 500, what
            assert markers[item.pk] not in text, f"marker of blind item leaked to a participant in {what}"
    assert not SuggestionExposure.objects.filter(item__in=blind_items, annotator=participant.user).exists()
    assert not Annotation.objects.filter(item__in=blind_items, annotator=participant.user, suggestion_shown=True)

    # Control: an item the participant's queue served (the gate opens no other) shows its marker on the page.
    shown = shown_items[0]
    assignment_claim_item(project=project, item=shown, annotator=participant.user)
    bodies, _ = _walk(client, project, shown)
    assert "page" in [what for what, _, text in bodies if markers[shown.pk] in text], "the search itself works"
    end = client.get(reverse("study_end", kwargs={"token": link.token}), follow=True).content.decode()
    for item in blind_items:
        assert markers[item.pk] not in end
