"""A response may be empty (real data has models that answered nothing): it imports, as "", by either path."""

from __future__ import annotations

import hashlib
import json

import pytest

from projects.imports.items import ImportRejected, items_import
from projects.models import Item, Response
from tests.data import comparisons
from tests.factories import ProjectFactory


@pytest.fixture
def empty_project(db):
    return ProjectFactory()


def test_empty_responses_import_in_native_and_trl_rows(empty_project):
    lines = [
        json.dumps({"id": "n1", "prompt": "Summarise", "responses": ["", {"text": "  ", "model": "m"}]}),
        json.dumps({"id": "n2", "prompt": "Summarise", "responses": [{"text": "", "model": "m"}, "A summary"]}),
        json.dumps({"id": "t1", "prompt": "Summarise", "chosen": "A summary", "rejected": ""}),
    ]

    result = items_import(project=empty_project, lines=lines)

    assert result.created == 3

    def texts(external_id):
        return list(
            Response.objects.filter(item__project=empty_project, item__external_id=external_id)
            .order_by("position")
            .values_list("text", flat=True)
        )

    assert texts("n1") == ["", "  "]
    assert texts("n2") == ["", "A summary"]
    assert sorted(texts("t1")) == ["", "A summary"]


def test_an_empty_prompt_or_a_missing_text_is_still_refused(empty_project):
    lines = [
        json.dumps({"id": "a", "prompt": "", "responses": ["x", "y"]}),
        json.dumps({"id": "b", "prompt": "p", "responses": [{"model": "m"}, "y"]}),
        json.dumps({"id": "c", "prompt": "p", "responses": [None, "y"]}),
    ]

    with pytest.raises(ImportRejected) as rejected:
        items_import(project=empty_project, lines=lines)

    messages = {e.line: e.message for e in rejected.value.errors}
    assert "prompt is empty" in messages[1]
    assert "responses[0].text must be a text" in messages[2]
    assert "responses[0] must be a text" in messages[3]
    assert not Item.objects.filter(project=empty_project).exists()


def test_cnn_dailymail_comparisons_with_empty_summaries_import_whole(empty_project):
    rows = comparisons("batch0_cnndm")
    items = {}
    for row in rows:
        texts = "\x1f".join(s["text"] for s in row["summaries"])
        items.setdefault(
            f"{row['info']['id']}:{hashlib.sha1(texts.encode()).hexdigest()[:12]}",
            {
                "prompt": row["info"]["article"],
                "responses": [{"text": s["text"], "model": s["policy"]} for s in row["summaries"]],
            },
        )
    lines = [json.dumps({"id": key, **value}) for key, value in items.items()]
    empty = sum(1 for value in items.values() for r in value["responses"] if not r["text"].strip())

    result = items_import(project=empty_project, lines=lines)

    assert empty > 0  # the data set has them: that is the point of this test
    assert result.created == len(items)
    stored_empty = [
        t for t in Response.objects.filter(item__project=empty_project).values_list("text", flat=True) if not t.strip()
    ]
    assert len(stored_empty) == empty
