"""The study-link pages: attention checks ticked from the list of gold items (typed ids still work), each link's
page shows every setting, its attention items and its numbers, and closes or reopens it; 404 for anyone but leads."""

from __future__ import annotations

from django.urls import reverse

from annotation.crowd.models import StudyLink
from annotation.crowd.services import ParticipantIds, participant_enter, study_link_create


def _gold(project, *external_ids: str) -> None:
    project.items.filter(external_id__in=external_ids).update(gold_position=0)


def test_attention_items_are_ticked_from_the_gold_items(project, lead_client):
    items = list(project.items.order_by("external_id").values_list("external_id", flat=True))
    _gold(project, items[0], items[1])
    page = lead_client.get(f"/projects/{project.pk}/study-links/").content.decode()
    assert f'name="attention_item" value="{items[0]}"' in page
    assert f'name="attention_item" value="{items[2]}"' not in page  # no gold: not a possible check

    lead_client.post(
        f"/projects/{project.pk}/study-links/",
        {"name": "Wave", "attention_item": [items[0], items[1]], "attention_item_ids": items[0], "attention_every": 2},
    )

    assert StudyLink.objects.get(project=project).attention_item_ids == [items[0], items[1]]


def test_a_link_page_shows_its_settings_and_numbers_and_closes_it(project, lead, lead_client):
    first = project.items.order_by("external_id").first()
    _gold(project, first.external_id)
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Wave",
        completion_code="DONE42",
        return_code="BACK7",
        max_participants=30,
        attention_item_ids=[first.external_id],
        completion_url="https://example.org/done?cc={code}",
    )
    participant_enter(link=link, ids=ParticipantIds(participant="p1"))
    url = reverse("study_link_detail", kwargs={"project_id": project.pk, "link_id": link.pk})

    page = lead_client.get(url).content.decode()

    for shown in ("DONE42", "BACK7", "https://example.org/done?cc={code}", first.external_id, link.token):
        assert shown in page
    numbers = page.split('id="link-numbers"')[1].split("</dl>")[0]
    assert "1 / 30" in numbers
    assert "fixed once it exists" in page

    response = lead_client.post(
        reverse("study_link_active", kwargs={"project_id": project.pk, "link_id": link.pk}),
        {"active": "false", "back": "detail"},
    )
    assert response["Location"] == url
    link.refresh_from_db()
    assert link.active is False


def test_annotators_and_outsiders_get_404(project, lead, annotator_client, outsider_client):
    link = study_link_create(project=project, created_by=lead, name="Wave")
    url = reverse("study_link_detail", kwargs={"project_id": project.pk, "link_id": link.pk})
    for client in (annotator_client, outsider_client):
        assert client.get(url).status_code == 404
