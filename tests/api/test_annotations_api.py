"""Annotations through the API: annotators write their own through annotation_save and read only their own."""

from __future__ import annotations

from annotation.models import Annotation, AnnotationRevision
from tests.exports.builders import label_ifs

JSON = {"content_type": "application/json"}


def _values(mu0=0.7, nu0=0.1, mu1=0.2, nu1=0.6):
    return [{"position": 0, "mu": mu0, "nu": nu0}, {"position": 1, "criterion": "overall", "mu": mu1, "nu": nu1}]


def test_annotator_creates_then_edits_own_label(project, annotator_client, annotator):
    item = project.items.order_by("id").first()
    url = f"/api/projects/{project.pk}/annotations/"

    created = annotator_client.post(url, {"item": item.pk, "values": _values(), "client_token": "t1"}, **JSON)
    edited = annotator_client.post(url, {"item": item.pk, "values": _values(mu0=0.5), "client_token": "t2"}, **JSON)

    assert created.status_code == 201
    assert edited.status_code == 200
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert annotation.source == "api"
    assert annotation.revision_count == 2
    assert list(AnnotationRevision.objects.filter(annotation=annotation).values_list("reason", flat=True)) == [
        "api",
        "api",
    ]
    assert {v["position"]: v["mu"] for v in edited.json()["values"]} == {0: 0.5, 1: 0.2}


def test_values_break_the_per_mille_rule_or_ifs_and_are_named(project, annotator_client):
    item = project.items.order_by("id").first()
    url = f"/api/projects/{project.pk}/annotations/"

    finer = annotator_client.post(url, {"item": item.pk, "values": _values(mu0=0.7001)}, **JSON)
    too_much = annotator_client.post(url, {"item": item.pk, "values": _values(nu1=0.9)}, **JSON)

    assert finer.status_code == 400
    assert "values" in finer.json()["errors"]
    assert too_much.status_code == 400
    assert "values[1][overall]" in too_much.json()["errors"]
    assert not Annotation.objects.exists()


def test_annotator_reads_only_own_labels_and_lead_reads_all(
    project, annotator, annotator2, annotator_client, lead_client
):
    item = project.items.order_by("id").first()
    mine = label_ifs(item=item, annotator=annotator, values=[(500, 200), (100, 700)])
    theirs = label_ifs(item=item, annotator=annotator2, values=[(300, 300), (400, 100)])
    url = f"/api/projects/{project.pk}/annotations/"

    seen_by_annotator = [a["id"] for a in annotator_client.get(url).json()["results"]]
    seen_by_lead = {a["id"] for a in lead_client.get(url).json()["results"]}

    assert seen_by_annotator == [mine.pk]
    assert seen_by_lead == {mine.pk, theirs.pk}
    assert annotator_client.get(f"{url}{theirs.pk}/").status_code == 404
    assert annotator_client.put(f"{url}{theirs.pk}/", {"values": _values()}, **JSON).status_code == 404
    assert lead_client.get(f"{url}{theirs.pk}/").json()["annotator"] == "annotator2"


def test_a_lead_does_not_label(project, lead_client):
    item = project.items.order_by("id").first()
    response = lead_client.post(
        f"/api/projects/{project.pk}/annotations/",
        {"item": item.pk, "values": _values()},
        **JSON,
    )

    assert response.status_code == 400
    assert "annotator" in response.json()["errors"]
