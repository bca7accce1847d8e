"""The gold answer and its justification never reach annotators: not through the item API (list, detail) nor the
annotation page or its fragments. Item import files gold-related metadata keys and ``lead_metadata`` under the
lead-only part. Every marker must appear for the lead, so an empty response cannot pass."""

from __future__ import annotations

import json

import pytest

from annotation.models import Annotation
from projects.imports.items import ImportRejected, items_import
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url, next_url

GOLD_MARKERS = ("GOLDJUST-41x", "GOLDEXPL-73q", "LEADNOTE-19k", "GOLDRAT-88w")
VISIBLE_MARKER = "SOURCE-55v"


def _row(n: int) -> str:
    return json.dumps(
        {
            "id": f"gold-{n}",
            "prompt": f"Question {n}?",
            "responses": [f"Answer A {n}", f"Answer B {n}"],
            "gold": 1,
            "metadata": {
                "source": f"{VISIBLE_MARKER}-{n}",
                "expert_justification": f"{GOLD_MARKERS[0]}-{n}",
                "Explanation": f"{GOLD_MARKERS[1]}-{n}",
                "gold_rationale": f"{GOLD_MARKERS[3]}-{n}",
            },
            "lead_metadata": {"note": f"{GOLD_MARKERS[2]}-{n}"},
        }
    )


@pytest.fixture
def gold_items(project: Project) -> list[Item]:
    Item.objects.filter(project=project).delete()
    items_import(project=project, lines=[_row(n) for n in range(3)])
    return list(Item.objects.filter(project=project).order_by("pk"))


def test_import_splits_gold_keys_into_the_lead_only_part(gold_items):
    item = gold_items[0]
    assert item.metadata == {"source": f"{VISIBLE_MARKER}-0"}
    assert set(item.lead_metadata) == {"expert_justification", "Explanation", "gold_rationale", "note"}


def test_conflicting_copies_of_a_lead_only_key_are_refused(project):
    row = json.loads(_row(9))
    row["lead_metadata"]["expert_justification"] = "something else"
    with pytest.raises(ImportRejected, match="lead-only and differs"):
        items_import(project=project, lines=[json.dumps(row)])


def _bodies(client, project, items) -> str:
    bodies = [client.get(f"/api/projects/{project.pk}/items/").content.decode()]
    for item in items:
        bodies.append(client.get(f"/api/projects/{project.pk}/items/{item.pk}/").content.decode())
    return "\n".join(bodies)


def test_the_api_shows_gold_to_leads_only(project, gold_items, lead_client, annotator_client):
    lead_seen = _bodies(lead_client, project, gold_items)
    annotator_seen = _bodies(annotator_client, project, gold_items)

    for n in range(len(gold_items)):
        assert f"Question {n}?" in annotator_seen  # the search works on these bodies
        # Metadata, even the part not about gold, is the lead's: annotators get the prompt and responses only.
        assert f"{VISIBLE_MARKER}-{n}" in lead_seen
        assert f"{VISIBLE_MARKER}-{n}" not in annotator_seen
        for marker in GOLD_MARKERS:
            assert f"{marker}-{n}" in lead_seen
            assert f"{marker}-{n}" not in annotator_seen
    assert "gold_position" not in annotator_seen
    assert "lead_metadata" not in annotator_seen


def test_the_annotation_page_never_carries_gold(project, gold_items, annotator_client):
    htmx = {"HTTP_HX_REQUEST": "true"}
    bodies = [annotator_client.get(next_url(project), follow=True).content.decode()]
    for item in gold_items:
        url = item_url(project, item)
        bodies.append(annotator_client.get(url).content.decode())
        bodies.append(annotator_client.get(url, **htmx).content.decode())
        saved = annotator_client.post(url, ifs_form(item), follow=True)
        bodies.append(saved.content.decode())
        bodies.append(annotator_client.get(url).content.decode())
    seen = "\n".join(bodies)

    assert Annotation.objects.filter(item__in=gold_items).count() == len(gold_items)  # the walk did reach them
    assert all(f"Question {n}?" in seen for n in range(len(gold_items)))
    for marker in GOLD_MARKERS:
        assert marker not in seen
