"""The suggestion card never shows a figure of fewer than 5 comparisons as a number (no "0.000 [0.000, 0.000]"): it
says "needs 5 comparisons" with the count so far. Where items have gold, the model's accuracy against gold stands
beside blind agreement and the human-human ceiling, each explained in one sentence."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from projects.models import Item
from suggestions.figures import suggestion_figures_recompute
from tests.factories import ItemFactory, SuggestionFactory
from tests.suggestions.helpers import label

pytestmark = pytest.mark.django_db


def _page(client, project) -> str:
    return client.get(reverse("suggestion_card", args=[project.pk])).content.decode()


def _rows(page: str) -> dict[str, str]:
    table = page[page.index('<table class="suggestion-figures">') : page.index("</table>")]
    return {
        m.group(1): re.sub(r"\s+", " ", m.group(2))
        for m in re.finditer(r'<th scope="row">([^<]+)</th>(.*?)</tr>', table, re.S)
    }


def test_one_pair_of_blind_labels_says_what_it_needs(project, lead_client, annotator, annotator2):
    # One blind item labelled by two people who disagree with each other: one human-human pair, agreement 0.
    item = ItemFactory(project=project)
    Item.objects.filter(pk=item.pk).update(is_blind=True)
    SuggestionFactory(item=item, preferred_position=0)
    label(project, item, annotator, 0)
    label(project, item, annotator2, 1)
    suggestion_figures_recompute(project_id=project.pk)

    page = _page(lead_client, project)
    blind_row = _rows(page)["Blind"]

    assert "needs 5 comparisons (2 so far)" in blind_row
    assert "needs 5 comparisons (1 so far)" in blind_row  # the human-human pair
    assert "0.000" not in blind_row
    assert "[0.000, 0.000]" not in page
    assert "needs 5 comparisons (1 so far)" in page[page.index("interval-plot") :]  # the plot says it too


def test_gold_accuracy_stands_beside_blind_agreement_with_its_meaning(project, lead_client, annotator, annotator2):
    items = [ItemFactory(project=project) for _ in range(10)]
    Item.objects.filter(pk__in=[i.pk for i in items]).update(is_blind=True)
    for index, item in enumerate(items):
        SuggestionFactory(item=item, preferred_position=0)
        # Gold agrees with the suggestion on 8 of the 10 items.
        Item.objects.filter(pk=item.pk).update(gold_position=0 if index < 8 else 1)
        label(project, item, annotator, 0)
        label(project, item, annotator2, 0 if index % 3 else 1)
    figures = suggestion_figures_recompute(project_id=project.pk)

    gold = figures["gold"]["agreement"]
    assert gold["value"] == pytest.approx(0.8)
    assert gold["n"] == 10
    assert gold["ci"][0] < 0.8 < gold["ci"][1]

    page = _page(lead_client, project)
    gold_row = _rows(page)["LLM vs gold"]
    assert "0.800" in gold_row
    assert f"[{gold['ci'][0]:.3f}, {gold['ci'][1]:.3f}]" in gold_row
    assert "not the model&#x27;s accuracy" in page or "not the model's accuracy" in page
    assert "ceiling for the model" in page
    assert "accuracy against the reference answer" in page


def test_without_gold_items_the_card_says_so(project, lead_client, annotator, annotator2):
    for _ in range(6):
        item = ItemFactory(project=project)
        SuggestionFactory(item=item, preferred_position=0)
        label(project, item, annotator, 0)
    suggestion_figures_recompute(project_id=project.pk)
    assert "no gold items" in _rows(_page(lead_client, project))["LLM vs gold"]
