"""Potato: its data file gives the items, its JSON Lines export the pairwise and Likert labels."""

from __future__ import annotations

import io
import json

import pytest

from projects.formats import potato
from projects.imports.items import ImportRejected
from projects.models import TIE, Project
from tests.factories import ProjectFactory
from tests.formats.helpers import import_items, import_labels, snapshot, stored_items, stored_labels

pytestmark = pytest.mark.django_db


def test_data_file_and_pairwise_export():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    items = import_items(project, "potato", "potato_data.jsonl")
    labels = import_labels(project, "potato", "potato_pairwise.jsonl")

    assert items.created == 3
    assert stored_items(project)["q2"] == ("Name a prime number between 20 and 30.", ["23 (29 also works).", "21"])
    assert labels.created == 4
    assert stored_labels(project) == {
        ("q1", "maria"): 0,
        ("q2", "maria"): TIE,
        ("q1", "kenji"): 1,
        ("q3", "kenji"): 0,
    }


def test_likert_export():
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=5)
    import_items(project, "potato", "potato_data.jsonl")

    import_labels(project, "potato", "potato_likert.jsonl")

    assert stored_labels(project) == {("q1", "maria"): 1, ("q2", "maria"): 4, ("q1", "kenji"): 2}


def test_pairwise_scale_mode_maps_minus_k_to_the_first_point():
    lines = [
        {"instance_id": "q1", "user_id": "u", "labels": {"pref": {"scale_value": "-3"}}},
        {"instance_id": "q2", "user_id": "u", "labels": {"pref": {"scale_value": "0"}}},
        {"instance_id": "q3", "user_id": "u", "labels": {"pref": {"scale_value": "3"}}},
    ]
    handle = io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())

    converted = potato.labels(handle, mode="likert", likert_points=7)

    assert [row["likert"] for _, row in converted.rows] == [1, 4, 7]
    assert converted.errors == []


def test_bad_export_names_each_line_and_changes_nothing():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(project, "potato", "potato_data.jsonl")

    with pytest.raises(ImportRejected) as rejected:
        import_labels(project, "potato", "potato_bad.jsonl")

    assert [str(e) for e in rejected.value.errors] == [
        "line 2: Potato pairwise selection 'C' is not 'A', 'B' or 'tie'",
        "line 3: Potato line has no 'user_id'",
        'line 4: no item with id "q9"',
    ]
    assert snapshot(project) == (3, 0)


def test_skipping_bad_lines_keeps_the_good_ones_and_reports_the_rest():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(project, "potato", "potato_data.jsonl")

    result = import_labels(project, "potato", "potato_bad.jsonl", skip_invalid=True)

    assert result.created == 1
    assert stored_labels(project) == {("q1", "maria"): 0}
    assert [e.line for e in result.errors] == [2, 3, 4]
