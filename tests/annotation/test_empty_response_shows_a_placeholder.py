"""An empty response is shown as an explicit "(empty response)" to the annotator and the lead, never as a blank."""

from __future__ import annotations

from django.urls import reverse

from projects.models import Item
from tests.annotation.conftest import item_url
from tests.factories import ItemFactory

PLACEHOLDER = "<em>(empty response)</em>"


def test_the_annotation_page_says_a_response_is_empty(project, annotator_client):
    item = ItemFactory(project=project, responses=["", "A real <b>answer</b>"])
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()

    html = annotator_client.get(item_url(project, item)).content.decode()

    assert html.count(PLACEHOLDER) == 1
    assert "response-empty" in html
    # The other response is still rendered, and escaped.
    assert "A real &lt;b&gt;answer&lt;/b&gt;" in html


def test_whitespace_only_counts_as_empty_and_text_does_not(project, annotator_client):
    item = ItemFactory(project=project, responses=["   \n ", "(empty response)"])
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()

    html = annotator_client.get(item_url(project, item)).content.decode()

    assert html.count(PLACEHOLDER) == 1


def test_the_lead_review_page_says_a_response_is_empty(project, lead_client):
    item = ItemFactory(project=project, responses=["", "Something"])

    html = lead_client.get(reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})).content

    assert html.decode().count('<em class="muted">(empty response)</em>') == 1
