"""Several rows for one annotator × item in a label file are revisions: the last one stands, every one is kept."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.imports import labels as label_import
from annotation.imports.labels import labels_import
from annotation.models import Annotation, AnnotationRevision, JudgmentValue
from projects.models import Item, Job


def _ifs(item, annotator="alice", first=(0.7, 0.1), second=(0.2, 0.6), **extra):
    return json.dumps(
        {
            "item": item.external_id,
            "annotator": annotator,
            "mode": "ifs",
            "values": [
                {"position": 0, "mu": first[0], "nu": first[1]},
                {"position": 1, "mu": second[0], "nu": second[1]},
            ],
            **extra,
        }
    )


@pytest.fixture
def items(project):
    return list(project.items.order_by("id"))


def _values(annotation):
    return sorted(JudgmentValue.objects.filter(annotation=annotation).values_list("response__position", "mu", "nu"))


def test_the_last_row_stands_and_every_row_is_a_revision(project, items):
    lines = [
        _ifs(items[0], first=(0.7, 0.1), time_spent_ms=1000, timestamp="2024-03-01T12:00:00Z"),
        _ifs(items[1], annotator="bob"),
        _ifs(items[0], first=(0.5, 0.2), time_spent_ms=2000),
        _ifs(items[0], first=(0.3, 0.3), time_spent_ms=500, response_order=[1, 0]),
    ]

    result = labels_import(project=project, lines=lines)

    assert (result.created, result.revisions, result.skipped) == (2, 2, 0)
    label = Annotation.objects.get(item=items[0], annotator__imported_identity__external_id="alice")
    assert _values(label) == [(0, 300, 300), (1, 200, 600)]
    assert label.revision_count == 3
    assert label.time_spent_ms == 3500
    assert label.response_order == [1, 0]
    assert label.created_at.isoformat().startswith("2024-03-01T12:00:00")
    revisions = list(label.revisions.order_by("number"))
    assert [r.number for r in revisions] == [1, 2, 3]
    assert [r.payload["values"][0]["mu"] for r in revisions] == [700, 500, 300]
    assert [r.time_spent_ms for r in revisions] == [1000, 2000, 500]
    assert Item.objects.get(pk=items[0].pk).annotation_count == 1
    assert Annotation.objects.filter(project=project).count() == 2


def test_a_suggestion_shown_once_makes_the_label_shown_from_then_on(project, items):
    lines = [
        _ifs(items[0]),
        _ifs(items[0], suggestion_shown=True),
        _ifs(items[0], suggestion_shown=False),
    ]

    labels_import(project=project, lines=lines)

    label = Annotation.objects.get(item=items[0])
    assert label.suggestion_shown is True
    assert list(label.revisions.order_by("number").values_list("suggestion_shown", flat=True)) == [False, True, True]


def test_repeats_on_later_pages_revise_the_label_written_earlier(project, items, monkeypatch):
    monkeypatch.setattr(label_import, "PAGE_SIZE", 2)
    lines = [
        _ifs(items[0], first=(0.9, 0.0)),
        _ifs(items[1]),
        _ifs(items[2]),
        _ifs(items[0], first=(0.1, 0.8), suggestion_shown=True),
        _ifs(items[3]),
        _ifs(items[0], first=(0.4, 0.4)),
    ]

    result = labels_import(project=project, lines=lines)

    assert (result.created, result.revisions) == (4, 2)
    label = Annotation.objects.get(item=items[0])
    assert _values(label)[0] == (0, 400, 400)
    assert JudgmentValue.objects.filter(annotation=label).count() == 2
    revisions = list(label.revisions.order_by("number"))
    assert [(r.number, r.payload["values"][0]["mu"], r.suggestion_shown) for r in revisions] == [
        (1, 900, False),
        (2, 100, True),
        (3, 400, True),
    ]
    assert label.revision_count == 3
    assert label.suggestion_shown is True


def test_a_bad_repeat_is_skipped_and_the_last_good_one_stands(project, items):
    lines = [_ifs(items[0], first=(0.6, 0.1)), _ifs(items[0], first=(0.9, 0.9)), _ifs(items[0], first=(0.2, 0.1))]

    result = labels_import(project=project, lines=lines, skip_invalid=True)

    assert (result.created, result.revisions, [e.line for e in result.errors]) == (1, 1, [2])
    label = Annotation.objects.get(item=items[0])
    assert _values(label)[0] == (0, 200, 100)
    assert AnnotationRevision.objects.filter(annotation=label).count() == 2


def test_the_job_and_the_command_report_revisions(
    project, items, lead_client, django_capture_on_commit_callbacks, settings, tmp_path, capsys
):
    settings.MEDIA_ROOT = tmp_path
    text = "\n".join([_ifs(items[0]), _ifs(items[0], first=(0.1, 0.1))]) + "\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(
            f"/api/projects/{project.pk}/labels/import/",
            {"file": SimpleUploadedFile("labels.jsonl", text.encode(), content_type="application/jsonl")},
        )
    job = Job.objects.get(pk=response.json()["job"])
    path = tmp_path / "more.jsonl"
    path.write_text("\n".join([_ifs(items[1], annotator="carol"), _ifs(items[1], annotator="carol")]) + "\n")
    call_command("import_labels", project.slug, str(path))

    assert job.status == Job.Status.DONE
    assert (job.result["created"], job.result["revisions"]) == (1, 1)
    assert "1 labels imported, 1 later rows kept as revisions" in capsys.readouterr().out
