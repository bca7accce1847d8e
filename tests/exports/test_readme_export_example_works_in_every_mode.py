"""The export example of the README and of the exports guide, run as written against a project of each mode, returns
its agreeing items."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from aggregation import services
from projects.models import Membership, Project
from tests.aggregation.conftest import annotate_binary, annotate_ifs, annotate_likert, project_make
from tests.factories import MembershipFactory

ROOT = Path(__file__).resolve().parents[2]
#: Where the example is written: the README's tour and the exports guide.
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "guides" / "exports.md")
EXPORTS_GUIDE = DOCUMENTS[1]

pytestmark = pytest.mark.django_db


def export_query(document: Path) -> str:
    """The query string of the document's curl line that exports DPO data."""
    match = re.search(r"curl [^\n]*'localhost:8000/api/projects/1/export/\?([^']+)' > dpo\.jsonl", document.read_text())
    assert match, f"{document.name} has no DPO export example"
    return match.group(1)


def label(project: Project, items, annotators) -> None:
    """Item 0: all three annotators prefer response 0. Item 1: two against one (agreement 1/3 in every mode)."""
    for item, choices in ((items[0], [0, 0, 0]), (items[1], [0, 0, 1])):
        for annotator, choice in zip(annotators, choices, strict=True):
            if project.mode == Project.Mode.BINARY:
                annotate_binary(item, annotator, choice)
            elif project.mode == Project.Mode.LIKERT:
                annotate_likert(item, annotator, 1 if choice == 0 else 5)
            else:
                values = [(800, 100), (100, 800)]
                annotate_ifs(item, annotator, values if choice == 0 else values[::-1])


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
@pytest.mark.parametrize("mode", [Project.Mode.BINARY, Project.Mode.LIKERT, Project.Mode.IFS])
def test_the_export_example_keeps_the_agreeing_item_in_every_mode(mode, document, lead):
    project, items, annotators = project_make(mode=mode, n_items=2, likert_points=5)
    label(project, items, annotators)
    services.item_aggregates_recompute(project_id=project.pk)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    client = APIClient()
    client.force_authenticate(lead)
    query = export_query(document)

    response = client.get(f"/api/projects/{project.pk}/export/?{query}")
    exported = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]

    assert response.status_code == 200
    assert parse_qs(urlsplit(f"?{query}").query)["format"] == ["dpo"]
    assert [row["id"] for row in exported] == [items[0].external_id]
    assert exported[0]["agreement"] == pytest.approx(1.0)
    assert (exported[0]["hesitation"] is None) == (mode != Project.Mode.IFS)


def test_max_hesitation_leaves_binary_items_out_as_the_exports_guide_says(lead):
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=2)
    label(project, items, annotators)
    services.item_aggregates_recompute(project_id=project.pk)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    client = APIClient()
    client.force_authenticate(lead)

    response = client.get(f"/api/projects/{project.pk}/export/?format=dpo&max_hesitation=0.5")

    assert b"".join(response.streaming_content) == b""
    assert "`max_hesitation` leaves those items out" in EXPORTS_GUIDE.read_text()
