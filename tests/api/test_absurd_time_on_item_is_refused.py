"""A negative time on item is refused by the API with the field named, and nothing is written; the page's save
path counts it as no time (the service clamps, see tests/annotation/test_bad_saves_change_nothing.py)."""

from __future__ import annotations

from annotation.models import Annotation

JSON = {"content_type": "application/json"}
VALUES = [{"position": 0, "mu": 0.7, "nu": 0.1}, {"position": 1, "mu": 0.2, "nu": 0.6}]


def test_negative_time_is_refused_and_nothing_is_written(project, annotator_client, annotator):
    item = project.items.order_by("id").first()
    url = f"/api/projects/{project.pk}/annotations/"

    refused = annotator_client.post(url, {"item": item.pk, "values": VALUES, "time_spent_ms": -1200}, **JSON)
    assert refused.status_code == 400
    assert "time_spent_ms" in refused.json()["errors"]
    assert not Annotation.objects.filter(item=item, annotator=annotator).exists()

    accepted = annotator_client.post(url, {"item": item.pk, "values": VALUES, "time_spent_ms": 1200}, **JSON)
    assert accepted.status_code == 201
    assert Annotation.objects.get(item=item, annotator=annotator).time_spent_ms == 1200
