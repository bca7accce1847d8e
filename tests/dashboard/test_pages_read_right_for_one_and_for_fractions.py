"""Rendered pages never say "1 items" or "1 people", and never print a float with a long tail (0.3333333333): a
first-hour project (one item labelled by two people, one label each, weights a third each) is where these slip.
Every lead and annotator page is fetched and scanned as text."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from aggregation import services
from annotation.services import assignment_claim_next
from tests.annotation.conftest import ifs_form, item_url
from tests.conftest import _logged_in

SINGULAR_PLURAL = re.compile(
    r"(?<![\d.,])1 (items|people|labels|annotators|judgments|responses|criteria|skips|requests|flags|comparisons)\b"
)
LONG_FLOAT = re.compile(r"\d\.\d{5,}")
TAGS = re.compile(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", re.S)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", TAGS.sub(" ", html))


@pytest.mark.django_db(transaction=True)
def test_no_page_says_one_items_or_prints_a_long_float(project, lead, annotator, annotator2):
    project.weight_consistency = project.weight_expertise = project.weight_agreement = 1 / 3
    project.save(update_fields=["weight_consistency", "weight_expertise", "weight_agreement"])
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
    assert found == {}
