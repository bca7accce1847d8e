"""Argilla records: fields become items, submitted rankings binary labels, ratings over the pair Likert points."""

from __future__ import annotations

import pytest

from projects.imports.items import ImportRejected
from projects.models import Project
from tests.factories import ProjectFactory
from tests.formats.helpers import import_items, import_labels, snapshot, stored_items, stored_labels

pytestmark = pytest.mark.django_db

FIRST = "4a1f6d0e-0c9b-4a4e-9d83-b4f1e5c2a001"
SECOND = "9b2e7c1f-1d0a-4b5f-8e94-c5a2f6d3b002"


def test_rankings_become_binary_labels():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    items = import_items(project, "argilla", "argilla_records.json")
    labels = import_labels(project, "argilla", "argilla_records.json")

    assert items.created == 2
    prompt, responses = stored_items(project)["rec-002"]
    assert prompt == "Is 0.1 + 0.2 == 0.3 in Python?"
    assert responses[0] == "Yes."
    # Record metadata is the lead's: annotators receive the prompt and the responses only.
    rec = project.items.get(external_id="rec-001")
    assert (rec.metadata, rec.lead_metadata) == ({}, {"source_split": "train"})
    # The draft answer to rec-002 is not a label; the rank-object form and the plain list both read.
    assert labels.created == 3
    assert stored_labels(project) == {("rec-001", FIRST): 0, ("rec-001", SECOND): 1, ("rec-002", FIRST): 1}


def test_ratings_become_likert_points():
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=7)
    import_items(project, "argilla", "argilla_records.json")

    import_labels(project, "argilla", "argilla_records.json")

    assert stored_labels(project) == {("rec-001", FIRST): 2, ("rec-001", SECOND): 6, ("rec-002", FIRST): 7}


def test_bad_records_are_named_and_nothing_changes():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    with pytest.raises(ImportRejected) as items_rejected:
        import_items(project, "argilla", "argilla_bad.json")
    assert [str(e) for e in items_rejected.value.errors] == [
        "line 3: record 3 (id rec-003): Argilla record has fewer than two response fields besides the prompt"
    ]
    assert snapshot(project) == (0, 0)

    import_items(project, "argilla", "argilla_records.json")
    with pytest.raises(ImportRejected) as labels_rejected:
        import_labels(project, "argilla", "argilla_bad.json")
    assert [e.message for e in labels_rejected.value.errors] == [
        "record 2 (id rec-002): Argilla ranking names 'response3', which is not a response field "
        "(response1, response2)",
        "record 3 (id rec-003): Argilla record has fewer than two response fields besides the prompt",
    ]
    assert snapshot(project) == (2, 0)
