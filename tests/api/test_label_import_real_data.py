"""Existing human labels from OpenAI's summarize_from_feedback comparisons (batch 13) import whole and faithfully."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.contrib.auth import get_user_model

from annotation.imports.labels import labels_import
from annotation.models import Annotation, AnnotationRevision
from projects.imports.items import items_import
from projects.models import Item, Membership, Project
from projects.services import project_create
from tests.data import comparisons as data_comparisons


def _comparisons() -> list[dict]:
    return data_comparisons("batch13")


def _item_id(row: dict) -> str:
    # One post is compared with several summary pairs: the pair, not the post, is the item.
    texts = "\x1f".join(summary["text"] for summary in row["summaries"])
    return f"{row['info']['id']}:{hashlib.sha1(texts.encode()).hexdigest()[:12]}"


def _import_items(project: Project, rows: list[dict]) -> None:
    seen: dict[str, dict] = {}
    for row in rows:
        seen.setdefault(_item_id(row), row)
    lines = [
        json.dumps(
            {
                "id": item_id,
                "prompt": f"{row['info']['title']}\n\n{row['info']['post']}",
                "responses": [{"text": s["text"], "model": s["policy"]} for s in row["summaries"]],
                "metadata": {"subreddit": row["info"]["subreddit"]},
            }
        )
        for item_id, row in seen.items()
    ]
    items_import(project=project, lines=lines)


@pytest.fixture
def comparisons() -> list[dict]:
    return _comparisons()


def test_binary_labels_import_whole(db, comparisons, monkeypatch):
    changed: list[int] = []
    monkeypatch.setattr(
        "annotation.imports.labels.events.labels_changed", lambda *, project_id, item_ids: changed.extend(item_ids)
    )
    project = project_create(name="TL;DR batch 13", mode="binary", seed=13)
    _import_items(project, comparisons)
    lines = [
        json.dumps({"item": _item_id(r), "annotator": r["worker"], "mode": "binary", "choice": r["choice"]})
        for r in comparisons
    ]

    result = labels_import(project=project, lines=lines)

    assert result.created == len(comparisons) == Annotation.objects.filter(project=project).count()
    # Batch 13 holds no repeated worker × summary pair: nothing here is a revision.
    assert result.revisions == 0
    item_count = Item.objects.filter(project=project).count()
    assert sum(Item.objects.filter(project=project).values_list("annotation_count", flat=True)) == len(comparisons)
    assert sorted(changed) == sorted(Item.objects.filter(project=project).values_list("id", flat=True))
    assert len(changed) == item_count
    workers = {r["worker"] for r in comparisons}
    members = Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR)
    # Each worker is an identity of this project, its labels under a user nobody can log in as.
    assert set(members.values_list("user__imported_identity__external_id", flat=True)) == workers
    shadows = get_user_model().objects.filter(imported_identity__project=project)
    assert shadows.count() == len(workers)
    assert not any(u.has_usable_password() or u.is_active for u in shadows)
    assert AnnotationRevision.objects.filter(annotation__project=project, reason="import").count() == len(comparisons)
    project.refresh_from_db()
    assert project.labelling_started_at is not None
    row = comparisons[0]
    label = Annotation.objects.get(
        item__external_id=_item_id(row), annotator__imported_identity__external_id=row["worker"]
    )
    assert label.binary_choice == row["choice"]
    assert label.suggestion_shown is False
    assert label.source == "import"


def test_confidence_imports_as_a_nine_point_likert_scale(db, comparisons):
    project = project_create(name="TL;DR batch 13, Likert", mode="likert", likert_points=9, seed=13)
    _import_items(project, comparisons)
    lines = [
        json.dumps(
            {"item": _item_id(r), "annotator": r["worker"], "mode": "likert", "likert": r["extra"]["confidence"]}
        )
        for r in comparisons
    ]

    result = labels_import(project=project, lines=lines)

    assert result.created == len(comparisons)
    # The scale's 1 is "position 0 strongly preferred": every label agrees with the binary choice in the data.
    by_key = {(_item_id(r), r["worker"]): r["choice"] for r in comparisons}
    for external_id, worker, likert in Annotation.objects.filter(project=project).values_list(
        "item__external_id", "annotator__imported_identity__external_id", "likert_value"
    ):
        assert (likert > 5) == (by_key[(external_id, worker)] == 1)


def test_a_worker_changing_their_mind_later_in_the_file_is_a_revision(db, comparisons):
    project = project_create(name="TL;DR batch 13, revised", mode="binary", seed=13)
    _import_items(project, comparisons)
    first = [
        json.dumps({"item": _item_id(r), "annotator": r["worker"], "mode": "binary", "choice": r["choice"]})
        for r in comparisons
    ]
    revised = comparisons[:25]
    later = [
        json.dumps({"item": _item_id(r), "annotator": r["worker"], "mode": "binary", "choice": 1 - r["choice"]})
        for r in revised
    ]

    result = labels_import(project=project, lines=first + later)

    assert (result.created, result.revisions) == (len(comparisons), len(revised))
    assert Annotation.objects.filter(project=project).count() == len(comparisons)
    for r in revised:
        label = Annotation.objects.get(
            item__external_id=_item_id(r), annotator__imported_identity__external_id=r["worker"]
        )
        assert label.binary_choice == 1 - r["choice"]
        assert list(label.revisions.order_by("number").values_list("payload__binary_choice", flat=True)) == [
            r["choice"],
            1 - r["choice"],
        ]
