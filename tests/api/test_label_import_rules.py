"""Label import: every bad row named by line, nothing written unless asked to skip, per-mille rule, no overwrite
of labels that were there before the import."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.imports.labels import labels_import
from annotation.models import Annotation, JudgmentValue
from projects.imports.items import ImportRejected
from projects.models import Item


def _ifs(item, annotator="alice", first=(0.7, 0.1), second=(0.2, 0.6), **extra):
    return json.dumps(
        {
            "item": item.external_id,
            "annotator": annotator,
            "mode": "ifs",
            "values": [
                {"position": 0, "criterion": "overall", "mu": first[0], "nu": first[1]},
                {"position": 1, "mu": second[0], "nu": second[1]},
            ],
            **extra,
        }
    )


@pytest.fixture
def items(project):
    return list(project.items.order_by("id"))


def test_good_ifs_rows_store_per_mille_values_revision_and_timestamp(project, items):
    result = labels_import(
        project=project,
        lines=[_ifs(items[0], timestamp="2024-03-01T12:00:00Z", time_spent_ms=5000, response_order=[1, 0])],
    )

    assert result.created == 1
    label = Annotation.objects.get(item=items[0])
    assert sorted(JudgmentValue.objects.filter(annotation=label).values_list("response__position", "mu", "nu")) == [
        (0, 700, 100),
        (1, 200, 600),
    ]
    assert label.created_at.isoformat().startswith("2024-03-01T12:00:00")
    assert label.response_order == [1, 0]
    assert label.time_spent_ms == 5000
    assert label.revisions.get().reason == "import"
    assert Item.objects.get(pk=items[0].pk).annotation_count == 1


def test_bad_rows_are_named_by_line_and_nothing_is_written(project, items):
    lines = [
        _ifs(items[0]),
        "{not json",
        _ifs(items[1], first=(0.7005, 0.1)),
        _ifs(items[2], first=(0.8, 0.3)),
        json.dumps({"item": "nope", "annotator": "bob", "mode": "ifs", "values": []}),
        json.dumps({"item": items[3].external_id, "annotator": "bob", "mode": "binary", "choice": 1}),
        _ifs(items[0]),  # a revision of line 1, not an error
    ]
    with pytest.raises(ImportRejected) as rejected:
        labels_import(project=project, lines=lines)

    by_line = {e.line: e.message for e in rejected.value.errors}
    assert set(by_line) == {2, 3, 4, 5, 6}
    assert "JSON" in by_line[2]
    assert "thousandths" in by_line[3]
    assert "above 1" in by_line[4]
    assert '"mode" must be "ifs"' in by_line[6]
    assert Annotation.objects.count() == 0
    assert not project.imported_annotators.exists()


def test_skip_invalid_keeps_the_good_rows(project, items):
    result = labels_import(
        project=project, lines=[_ifs(items[0]), _ifs(items[1], second=(0.5, 0.6))], skip_invalid=True
    )

    assert result.created == 1
    assert [e.line for e in result.errors] == [2]
    assert Annotation.objects.filter(project=project).count() == 1


def test_an_imported_label_imported_again_changed_is_revised_with_its_history_kept(project, items):
    labels_import(project=project, lines=[_ifs(items[0])])
    again = labels_import(project=project, lines=[_ifs(items[0], first=(0.1, 0.1))])

    assert (again.created, again.revised) == (0, 1)
    assert JudgmentValue.objects.get(annotation__item=items[0], response__position=0).mu == 100
    first, second = Annotation.objects.get(item=items[0]).revisions.order_by("number")
    assert first.payload["values"][0]["mu"] == 700
    assert second.payload["values"][0]["mu"] == 100


def test_missing_values_are_named(project, items):
    row = json.loads(_ifs(items[0]))
    row["values"] = row["values"][:1]
    with pytest.raises(ImportRejected, match="values missing for position 1 overall"):
        labels_import(project=project, lines=[json.dumps(row)])


def test_command_reports_rows_and_refuses_the_file(project, items, tmp_path, capsys):
    path = tmp_path / "labels.jsonl"
    path.write_text(_ifs(items[0]) + "\n" + _ifs(items[1], first=(2, 0)) + "\n")

    with pytest.raises(CommandError, match="1 bad row"):
        call_command("import_labels", project.slug, str(path))
    assert "line 2" in capsys.readouterr().err
    assert Annotation.objects.count() == 0

    call_command("import_labels", project.slug, str(path), "--skip-invalid")
    assert Annotation.objects.count() == 1
