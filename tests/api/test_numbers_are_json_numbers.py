"""The API takes numbers as JSON numbers only: μ as "0.5" or true, an item id as "3" or 3.0, a Likert point as
true are refused with a message naming the field, and nothing is stored; the same request with numbers is taken."""

from __future__ import annotations

import json

import pytest

from annotation.models import Annotation


def _body(item, mu=0.6, **extra):
    return {
        "item": item.pk,
        "values": [{"position": 0, "mu": mu, "nu": 0.2}, {"position": 1, "mu": 0.2, "nu": 0.6}],
        **extra,
    }


def _post(client, project, body):
    return client.post(f"/api/projects/{project.pk}/annotations/", json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mu": "0.5"}, "values"),
        ({"mu": True}, "values"),
        ({"item": "ITEM"}, "item"),
        ({"item": "FLOAT"}, "item"),
        ({"time_spent_ms": "1200"}, "time_spent_ms"),
        ({"time_spent_ms": True}, "time_spent_ms"),
    ],
    ids=["mu-text", "mu-true", "item-text", "item-fraction", "time-text", "time-true"],
)
def test_numbers_in_text_or_booleans_are_refused(project, annotator_client, annotator, change, field):
    item = project.items.order_by("pk").first()
    body = _body(item, mu=change.get("mu", 0.6))
    if change.get("item") == "ITEM":
        body["item"] = str(item.pk)
    elif change.get("item") == "FLOAT":
        body["item"] = float(item.pk)
    if "time_spent_ms" in change:
        body["time_spent_ms"] = change["time_spent_ms"]
    response = _post(annotator_client, project, body)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert "JSON number" in json.dumps(response.json()["errors"][field])
    assert not Annotation.objects.filter(annotator=annotator).exists()


def test_the_same_request_with_numbers_is_taken(project, annotator_client, annotator):
    item = project.items.order_by("pk").first()
    response = _post(annotator_client, project, _body(item, time_spent_ms=1200))
    assert response.status_code == 201, response.content
    assert Annotation.objects.filter(annotator=annotator, item=item).exists()
