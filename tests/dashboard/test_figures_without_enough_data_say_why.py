"""A figure the data cannot support yet is named with what it needs, never shown as a number (the blind-sample
card has its own wording)."""

from __future__ import annotations

import re

import pytest

from aggregation.services import project_aggregates_recompute
from tests.aggregation.conftest import annotate_binary, annotate_ifs, project_make
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

NEEDS_OVERLAP = "needs 2 annotators on at least 5 items"


def _dashboard(lead, lead_client, dashboard_url, project) -> str:
    MembershipFactory(project=project, user=lead, role="lead")
    project_aggregates_recompute(project_id=project.pk)
    response = lead_client.get(dashboard_url(project))
    assert response.status_code == 200
    return response.content.decode()


def _agreement_card(html: str) -> str:
    return re.search(r'aria-labelledby="agreement-title">(.*?)</section>', html, re.S).group(1)


def test_one_label_asks_for_a_second_annotator(lead, lead_client, dashboard_url):
    project, items, annotators = project_make(mode="binary", n_items=2, n_annotators=1)
    annotate_binary(items[0], annotators[0], 0)
    html = _dashboard(lead, lead_client, dashboard_url, project)

    card = _agreement_card(html)
    assert card.count(NEEDS_OVERLAP) >= 4  # both pairwise figures and both α, plus the card's own sentence
    assert "needs IFS slider labels" in card  # IFS agreement in a binary project
    assert not re.search(r"<strong>-?\d\.\d{3}</strong>", card), "no number printed for a figure without data"
    assert f"No agreement to plot yet: it {NEEDS_OVERLAP}" in html
    assert "No hesitation to show: it needs IFS slider labels" in html


def test_labels_on_different_items_are_no_overlap(lead, lead_client, dashboard_url):
    project, items, annotators = project_make(n_items=2, n_annotators=2)
    annotate_ifs(items[0], annotators[0], [(800, 100), (100, 800)])
    annotate_ifs(items[1], annotators[1], [(100, 800), (800, 100)])
    html = _dashboard(lead, lead_client, dashboard_url, project)

    card = _agreement_card(html)
    assert NEEDS_OVERLAP in card
    assert "No agreement yet" in card


def test_overlapping_labels_show_numbers_and_no_excuse(lead, lead_client, dashboard_url):
    project, items, annotators = project_make(n_items=5, n_annotators=2)
    for item in items:
        annotate_ifs(item, annotators[0], [(800, 100), (100, 800)])
        annotate_ifs(item, annotators[1], [(700, 200), (200, 700)])
    html = _dashboard(lead, lead_client, dashboard_url, project)

    card = _agreement_card(html)
    assert NEEDS_OVERLAP not in card
    assert re.search(r"<strong>1\.000</strong>", card)
    assert "No agreement to plot yet" not in html
