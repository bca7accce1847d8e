"""Rendered pages never say "1 items", "1 people" or "1 item already have", and never print a float with a long tail
(0.3333333333): a first-hour project (one item labelled by two people, one label each, weights a third each) is where
these slip. Every lead and annotator page is fetched and scanned as text. Counts and numbers go through one helper
(projects/templatetags/numbers.py: ``count_noun``, ``agree``, ``number``), tested here on its own too; and a gold
change is reported as one, not as "a settings change"."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from aggregation import services
from annotation.notes.services import item_gold_set
from annotation.queue.services import assignment_claim_next
from projects.templatetags.numbers import agree, count_noun, number
from tests.annotation.conftest import ifs_form, item_url
from tests.conftest import _logged_in

SINGULAR_PLURAL = re.compile(
    r"(?<![\d.,])1 (items|people|labels|annotators|judgments|responses|criteria|skips|requests|flags|comparisons"
    r"|lines|minutes)\b"
    # A singular count followed by a plural verb: "1 item already have", "1 item take their".
    r"|(?<![\d.,])1 (item|label|person|annotator|judgment)( already)? (have|take|are|were)\b"
)
LONG_FLOAT = re.compile(r"\d\.\d{5,}")
TAGS = re.compile(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", re.S)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", TAGS.sub(" ", html))


@pytest.mark.django_db(transaction=True)
def test_no_page_says_one_items_or_prints_a_long_float(project, lead, annotator, annotator2):
    project.weight_consistency = project.weight_expertise = project.weight_agreement = 1 / 3
    project.overlap = 2
    project.save(update_fields=["weight_consistency", "weight_expertise", "weight_agreement", "overlap"])
    item = assignment_claim_next(project=project, annotator=annotator).item
    for person in (annotator, annotator2):
        client = _logged_in(person)
        assignment_claim_next(project=project, annotator=person)
        client.post(item_url(project, item), ifs_form(item, {0: (700, 100), 1: (200, 600)}))
    services.project_aggregates_recompute(project_id=project.pk)

    lead_client, annotator_client = _logged_in(lead), _logged_in(annotator)
    kwargs = {"project_id": project.pk}
    pages = {
        "dashboard": (lead_client, reverse("dashboard", kwargs=kwargs)),
        "settings": (lead_client, reverse("project_settings", kwargs=kwargs)),
        "item review": (lead_client, reverse("item_review", kwargs={**kwargs, "item_id": item.pk})),
        "suggestion card": (lead_client, reverse("suggestion_card", kwargs=kwargs)),
        "export": (lead_client, reverse("export_page", kwargs=kwargs)),
        "method study": (lead_client, reverse("method_study", kwargs=kwargs)),
        "lead home": (lead_client, reverse("home")),
        "annotator home": (annotator_client, reverse("home")),
        "annotation page": (annotator_client, item_url(project, item)),
        "done items": (annotator_client, reverse("annotate_done", kwargs=kwargs)),
        "handoff confirmation": (lead_client, reverse("suggestion_handoff", kwargs=kwargs)),
        "conclusions": (lead_client, reverse("conclusions", kwargs=kwargs)),
        "method study report": (lead_client, reverse("method_study_report", kwargs=kwargs)),
    }
    found = {}
    for name, (client, url) in pages.items():
        response = client.get(url)
        assert response.status_code == 200, name
        text = _text(response.content.decode())
        # Form fields count too: a weight field that shows 0.3333333333333333 is what the lead reads.
        shown_values = " ".join(re.findall(r'value="([^"]*)"', response.content.decode()))
        problems = [m.group(0) for m in SINGULAR_PLURAL.finditer(text)] + [
            m.group(0) for m in LONG_FLOAT.finditer(f"{text} {shown_values}")
        ]
        if problems:
            found[name] = problems
        if name == "handoff confirmation":
            # The one item two people labelled is complete at overlap 2: the count of one is on this page.
            assert "1 item already has all its labels" in text
    assert found == {}


@pytest.mark.parametrize(
    ("value", "forms", "expected"),
    [
        (1, "item", "1 item"),
        (0, "item", "0 items"),
        (2, "item", "2 items"),
        (1, "person", "1 person"),
        (2, "person", "2 people"),
        (1, "criterion", "1 criterion"),
        (3, "criterion", "3 criteria"),
        (2, "category", "2 categories"),
        (1204, "label", "1,204 labels"),
        (1.0, "label", "1 label"),
        (None, "item", "no items"),
    ],
)
def test_count_noun_agrees_with_its_count(value, forms, expected):
    assert count_noun(value, forms) == expected


def test_the_verb_after_a_count_agrees_and_numbers_read_short():
    assert f"{count_noun(1, 'item')} already {agree(1, 'has,have')}" == "1 item already has"
    assert f"{count_noun(3, 'item')} already {agree(3, 'has,have')}" == "3 items already have"
    assert number(1 / 3) == "0.3333"
    assert number(0.75) == "0.75"
    assert number(12.5) == "12.5"
    assert number(1204) == "1,204"
    assert number(float("nan")) == "—"
    assert number(None) == "—"


@pytest.mark.django_db
def test_a_gold_change_is_not_called_a_settings_change(project, lead):
    item = project.items.first()
    services.project_aggregates_recompute(project_id=project.pk)
    item_gold_set(project=project, item=item, lead=lead, gold_position=0)
    html = _logged_in(lead).get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    assert "after a settings change" not in html
    assert "recomputing after a change to the settings or gold" in html
