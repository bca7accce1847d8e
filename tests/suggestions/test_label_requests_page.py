"""The label-request page: the certification card links to it; a lead draws requests with the API's service and
rules (same draw, same refusals by field), watches each draw's answers; annotators and outsiders get 404."""

from __future__ import annotations

from annotation.models import LabelRequest
from projects.models import Project
from suggestions.requests import label_requests_draw
from tests.factories import SuggestionFactory


def _url(project) -> str:
    return f"/projects/{project.pk}/requests/"


def test_a_certification_draw_from_the_page_matches_the_service(project, lead_client, lead):
    for item in project.items.all():
        SuggestionFactory(item=item, preferred_position=0)
    response = lead_client.post(_url(project), {"kind": "certification", "size": "3", "labels_per_item": "1"})

    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="request-result"' in page
    drawn = sorted(LabelRequest.objects.filter(project=project).values_list("item__external_id", flat=True))
    assert len(drawn) == 3
    assert "certification 1" in page
    assert "0 / 3" in page
    # The API's service with the same arguments draws the same items next time round (seeded per draw number).
    LabelRequest.objects.all().delete()
    label_requests_draw(project=project, kind="certification", size=3, labels_per_item=1)
    assert sorted(LabelRequest.objects.values_list("item__external_id", flat=True)) == drawn


def test_the_service_rules_refuse_by_field_and_write_nothing(project, lead_client):
    audit = lead_client.post(_url(project), {"kind": "audit", "rate": "0.5", "labels_per_item": "1"})
    assert audit.status_code == 400
    assert "An audit follows a handoff" in audit.content.decode()

    stratified = lead_client.post(
        _url(project), {"kind": "verification", "size": "2", "labels_per_item": "1", "by_confidence": "on"}
    )
    assert stratified.status_code == 400
    assert "Only calibration and certification draws are stratified" in stratified.content.decode()
    assert not LabelRequest.objects.exists()


def test_the_card_links_to_the_page_and_the_fragment_refreshes(project, lead_client):
    assert _url(project) in lead_client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    fragment = lead_client.get(_url(project), headers={"HX-Request": "true"}).content.decode()
    assert 'id="request-draws"' in fragment
    assert "<html" not in fragment


def test_annotators_and_outsiders_get_404(project, annotator_client, outsider_client):
    for client in (annotator_client, outsider_client):
        assert client.get(_url(project)).status_code == 404
        assert client.post(_url(project), {"kind": "certification", "size": "2"}).status_code == 404
    assert not LabelRequest.objects.exists()
    assert Project.objects.get(pk=project.pk).phase == "collecting"
