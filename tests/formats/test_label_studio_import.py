"""Label Studio's JSON export: tasks become items, pairwise choices binary labels, a named rating control Likert
points."""

from __future__ import annotations

import pytest

from projects.imports.items import ImportRejected
from projects.models import TIE, Project
from tests.factories import ProjectFactory
from tests.formats.helpers import import_items, import_labels, snapshot, stored_items, stored_labels

pytestmark = pytest.mark.django_db


def test_pairwise_export_gives_items_and_binary_labels():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    items = import_items(project, "label-studio", "label_studio_pairwise.json")
    labels = import_labels(project, "label-studio", "label_studio_pairwise.json")

    assert items.created == 2
    stored = stored_items(project)
    assert stored["11"][0] == "Why does ice float on water?"
    assert stored["11"][1][1] == "Ice floats because it is colder than the water around it."
    assert stored["12"][1][0] == "Commit often."
    # left = answer1 = position 0; the cancelled annotation of task 12 is not a label.
    assert labels.created == 3
    assert stored_labels(project) == {
        ("11", "label-studio-1"): 0,
        ("11", "label-studio-2"): 1,
        ("12", "label-studio-1"): 1,
    }


def test_lead_time_and_creation_time_are_kept():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(project, "label-studio", "label_studio_pairwise.json")
    import_labels(project, "label-studio", "label_studio_pairwise.json")

    annotation = project.annotations.get(
        item__external_id="11", annotator__imported_identity__external_id="label-studio-1"
    )
    assert annotation.time_spent_ms == 23417
    assert annotation.created_at.isoformat().startswith("2026-10-02T09:14:05")


def test_rating_export_gives_likert_points():
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=5)
    import_items(project, "label-studio", "label_studio_rating.json")
    # The rating control is attached to answer1: only the lead can say it is a side-by-side scale.
    with pytest.raises(ImportRejected, match="rates 'answer1' only"):
        import_labels(project, "label-studio", "label_studio_rating.json")

    import_labels(project, "label-studio", "label_studio_rating.json", reading={"scheme": "preference_scale"})

    assert stored_labels(project) == {
        ("11", "label-studio-1"): 2,
        ("11", "label-studio-2"): 4,
        ("12", "label-studio-1"): 5,
    }


def test_ratings_beyond_the_project_scale_are_refused():
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=3)
    import_items(project, "label-studio", "label_studio_rating.json")

    with pytest.raises(ImportRejected) as rejected:
        import_labels(project, "label-studio", "label_studio_rating.json", reading={"scheme": "preference_scale"})

    assert [str(e) for e in rejected.value.errors] == [
        "line 1: task 1 (id 11): scale point 4 is outside this project's 1..3",
        "line 2: task 2 (id 12): scale point 5 is outside this project's 1..3",
    ]
    assert snapshot(project) == (2, 0)


def test_bad_export_names_each_task_and_changes_nothing():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    before = snapshot(project)

    with pytest.raises(ImportRejected) as items_rejected:
        import_items(project, "label-studio", "label_studio_bad.json")
    assert [(e.line, e.message) for e in items_rejected.value.errors] == [
        (
            3,
            "task 3 (id 13): Label Studio task data has no pair of responses "
            "(looked for answer1/answer2, text1/text2, response1/response2, response_a/response_b)",
        )
    ]
    assert snapshot(project) == before

    import_items(project, "label-studio", "label_studio_pairwise.json")
    with pytest.raises(ImportRejected) as labels_rejected:
        import_labels(project, "label-studio", "label_studio_bad.json")
    messages = [e.message for e in labels_rejected.value.errors]
    assert "task 2 (id 12): Label Studio task has no 'choices', 'pairwise' or 'rating' result" in messages
    assert any(m.startswith("task 3 (id 13):") for m in messages)
    assert snapshot(project) == (2, 0)


def test_a_binary_choice_refuses_a_project_of_another_mode():
    project = ProjectFactory(mode=Project.Mode.IFS)
    import_items(project, "label-studio", "label_studio_pairwise.json")

    with pytest.raises(ImportRejected) as rejected:
        import_labels(project, "label-studio", "label_studio_pairwise.json")

    assert rejected.value.errors[0].message == (
        "task 1 (id 11): Label Studio gives a choice between the responses: import it into a binary project "
        "(this project is ifs)"
    )


def test_choices_results_name_a_side_or_a_tie(tmp_path):
    import json

    from tests.formats.helpers import DATA

    tasks = json.loads((DATA / "label_studio_pairwise.json").read_text())
    for annotation, choice in zip(tasks[0]["annotations"], ["Answer 2", "Tie"], strict=True):
        annotation["result"] = [{"type": "choices", "value": {"choices": [choice]}, "from_name": "pick"}]
    tasks[1]["annotations"][0]["result"] = [{"type": "choices", "value": {"choices": ["answer1"]}}]
    path = tmp_path / "choices.json"
    path.write_text(json.dumps(tasks))
    project = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(project, "label-studio", "label_studio_pairwise.json")

    from annotation.imports.formats import labels_import_formatted

    with path.open("rb") as handle:
        labels_import_formatted(project=project, fmt="label-studio", handle=handle)

    assert stored_labels(project) == {
        ("11", "label-studio-1"): 1,
        ("11", "label-studio-2"): TIE,
        ("12", "label-studio-1"): 0,
    }


@pytest.mark.parametrize(
    ("choice", "side"),
    [("Answer 1", 0), ("response B", 1), ("answer2", 1), ("LEFT", 0), ("b", 1), ("No preference", "tie")],
)
def test_choice_texts_that_name_a_side(choice, side):
    from projects.formats.label_studio import _side

    assert _side(choice, ("answer1", "answer2")) == side


@pytest.mark.parametrize("choice", ["Extra", "Maybe", "Answer 3", "data"])
def test_choice_texts_that_name_no_side_are_refused(choice):
    from projects.formats.common import RecordInvalid
    from projects.formats.label_studio import _side

    with pytest.raises(RecordInvalid, match="names neither response"):
        _side(choice, ("answer1", "answer2"))
