"""Item import: both shapes, every bad row named by its line, nothing written unless skipping is asked for."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from projects.imports.items import ImportRejected, items_import
from projects.models import TIE, Item, Response, Suggestion, SuggestionValue
from projects.services import project_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def empty_project(lead):
    return project_create(name="Import", lead=lead, seed=42, minimum_blind_sample=0)


def native(i, **extra):
    row = {"id": f"n{i}", "prompt": f"Question {i}", "responses": [f"A{i}", {"text": f"B{i}", "model": "m-b"}]}
    row.update(extra)
    return json.dumps(row)


def test_native_rows_with_suggestion_and_gold(empty_project):
    lines = [
        native(
            1,
            gold=1,
            suggestion={
                "preferred": 0,
                "rationale": "shorter",
                "model": "llm",
                "ifs": [[0.7, 0.1], {"mu": 0.2, "nu": 0.6}],
            },
        ),
        native(2, gold="tie", metadata={"topic": "x"}),
    ]
    result = items_import(project=empty_project, lines=lines)
    assert (result.created, result.updated, result.skipped) == (2, 0, 0)
    first = Item.objects.get(project=empty_project, external_id="n1")
    assert first.gold_position == 1
    assert [(r.text, r.model_name) for r in first.responses.order_by("position")] == [("A1", ""), ("B1", "m-b")]
    assert first.suggestion.preferred_position == 0
    assert sorted(SuggestionValue.objects.filter(suggestion=first.suggestion).values_list("mu", "nu")) == [
        (200, 600),
        (700, 100),
    ]
    assert Item.objects.get(external_id="n2").gold_position == TIE
    assert Item.objects.get(external_id="n2").metadata == {"topic": "x"}


def test_trl_rows_shuffle_position_with_the_seed(empty_project):
    lines = [json.dumps({"prompt": f"P{i}", "chosen": f"good {i}", "rejected": f"bad {i}"}) for i in range(40)]
    items_import(project=empty_project, lines=lines, trl_chosen_as="gold")
    positions = []
    for item in Item.objects.filter(project=empty_project):
        texts = list(item.responses.order_by("position").values_list("text", flat=True))
        assert texts[item.gold_position].startswith("good")
        positions.append(item.gold_position)
    # With 40 fair draws both sides occur (the chance of not is 2 in a trillion).
    assert set(positions) == {0, 1}


def test_trl_chosen_as_suggestion(empty_project):
    items_import(
        project=empty_project,
        lines=[json.dumps({"id": "t1", "prompt": "P", "chosen": "yes", "rejected": "no"})],
        trl_chosen_as="suggestion",
    )
    item = Item.objects.get(external_id="t1")
    assert item.gold_position is None
    assert item.responses.get(position=item.suggestion.preferred_position).text == "yes"


BAD_ROWS = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"id": "x", "prompt": "p", "responses": ["only one"]}), "at least 2 responses"),
    (json.dumps({"id": "x", "prompt": "", "responses": ["a", "b"]}), "prompt is empty"),
    (json.dumps({"id": "x", "prompt": "p", "responses": ["a", "b"], "gold": 5}), "gold=5 is not a response index"),
    (json.dumps({"id": "x", "prompt": "p", "responses": ["a", "b"], "colour": 1}), "unknown field(s): colour"),
    (
        json.dumps(
            {
                "id": "x",
                "prompt": "p",
                "responses": ["a", "b"],
                "suggestion": {"preferred": 0, "ifs": [[0.7, 0.4], [0, 0]]},
            }
        ),
        "mu + nu = 1.1 exceeds 1",
    ),
    (
        json.dumps(
            {
                "id": "x",
                "prompt": "p",
                "responses": ["a", "b"],
                "suggestion": {"preferred": 0, "ifs": [[0.0005, 0], [0, 0]]},
            }
        ),
        "more than 3 decimals",
    ),
    (json.dumps({"prompt": "p", "chosen": "a"}), "rejected is missing"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_ROWS)
def test_bad_row_is_named_by_line_and_nothing_is_written(empty_project, bad, reason):
    lines = [native(1), native(2), bad, native(4)]
    with pytest.raises(ImportRejected) as caught:
        items_import(project=empty_project, lines=lines)
    assert [error.line for error in caught.value.errors] == [3]
    assert reason in caught.value.errors[0].message
    assert Item.objects.filter(project=empty_project).count() == 0
    assert Response.objects.filter(item__project=empty_project).count() == 0


def test_skip_invalid_imports_the_good_rows(empty_project):
    result = items_import(project=empty_project, lines=[native(1), "{", native(3)], skip_invalid=True)
    assert result.created == 2
    assert [(e.line, "not valid JSON" in e.message) for e in result.errors] == [(2, True)]


def test_duplicate_ids_rejected_skipped_or_updated_never_doubled(empty_project):
    items_import(project=empty_project, lines=[native(1)])
    with pytest.raises(ImportRejected, match="already exists"):
        items_import(project=empty_project, lines=[native(1), native(2)])
    assert Item.objects.filter(project=empty_project).count() == 1
    assert items_import(project=empty_project, lines=[native(1), native(2)], on_duplicate="skip").skipped == 1
    updated = items_import(project=empty_project, lines=[native(1, gold=0)], on_duplicate="update")
    assert updated.updated == 1
    assert Item.objects.get(external_id="n1").gold_position == 0
    assert Item.objects.filter(project=empty_project).count() == 2
    with pytest.raises(ImportRejected, match="already appears on line 1"):
        items_import(project=empty_project, lines=[native(9), native(9)])


def test_update_cannot_change_responses_of_labelled_items(empty_project):
    items_import(project=empty_project, lines=[native(1)])
    Item.objects.filter(external_id="n1").update(annotation_count=1)
    changed = json.dumps({"id": "n1", "prompt": "Question 1", "responses": ["other", "texts"]})
    with pytest.raises(ImportRejected, match="has labels"):
        items_import(project=empty_project, lines=[changed], on_duplicate="update")
    assert list(Item.objects.get(external_id="n1").responses.values_list("text", flat=True)) == ["A1", "B1"]


def test_command_reports_lines_and_exits_with_error(empty_project, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join([native(1), "{oops", native(3)]) + "\n")
    with pytest.raises(CommandError, match="1 bad row"):
        call_command("import_items", empty_project.slug, str(path))
    assert Item.objects.filter(project=empty_project).count() == 0
    call_command("import_items", empty_project.slug, str(path), "--skip-invalid")
    assert Item.objects.filter(project=empty_project).count() == 2
    assert Suggestion.objects.filter(item__project=empty_project).count() == 0


def test_update_replaces_what_changed(empty_project):
    items_import(project=empty_project, lines=[native(1), native(2), native(3, suggestion={"preferred": 0})])
    changed = [
        json.dumps({"id": "n1", "prompt": "Question 1", "responses": ["new A", "new B"]}),
        json.dumps({"id": "n2", "prompt": "Question 2", "responses": ["A2", {"text": "B2", "model": "renamed"}]}),
        native(3, suggestion={"preferred": 1, "ifs": [[0.1, 0.8], [0.9, 0]]}),
    ]
    assert items_import(project=empty_project, lines=changed, on_duplicate="update").updated == 3
    texts = lambda external_id: list(  # noqa: E731
        Item.objects.get(external_id=external_id).responses.order_by("position").values_list("text", "model_name")
    )
    assert texts("n1") == [("new A", ""), ("new B", "")]
    assert texts("n2") == [("A2", ""), ("B2", "renamed")]
    suggestion = Item.objects.get(external_id="n3").suggestion
    assert suggestion.preferred_position == 1
    assert sorted(suggestion.values.values_list("response__position", "mu", "nu")) == [(0, 100, 800), (1, 900, 0)]


def test_update_costs_the_same_queries_for_few_and_many_rows(empty_project):
    items_import(project=empty_project, lines=[native(i) for i in range(60)])

    def updated(ids):
        return [native(i, gold=1, suggestion={"preferred": 0}) for i in ids]

    with CaptureQueriesContext(connection) as few:
        items_import(project=empty_project, lines=updated(range(5)), on_duplicate="update")
    with CaptureQueriesContext(connection) as many:
        items_import(project=empty_project, lines=updated(range(5, 60)), on_duplicate="update")
    assert len(many.captured_queries) == len(few.captured_queries)
    assert Item.objects.filter(project=empty_project, gold_position=1).count() == 60
