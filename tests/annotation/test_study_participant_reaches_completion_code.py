"""A participant labels through the normal page until their queue is empty or the link's quota is reached, then sees
the completion code; the end is recorded once and survives reloads and revisits."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from annotation.models import Annotation
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.annotation.study_helpers import current_item, end_page, enter, enter_url, label


def test_queue_empty_ends_on_the_completion_code(project, lead):
    link = study_link_create(project=project, created_by=lead, name="All", completion_code="DONE-123")
    client = Client()
    enter(client, link, "pid-A")
    labelled = 0
    while (item := current_item(client, project)) is not None:
        label(client, project, item)
        labelled += 1
    assert labelled == project.items.count()
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.COMPLETED
    assert participant.finished_at is not None
    assert participant.code_shown_at is None, "not shown until the end page is"
    page = end_page(client, link)
    assert "DONE-123" in page
    participant.refresh_from_db()
    shown_at = participant.code_shown_at
    assert shown_at is not None
    assert "DONE-123" in end_page(client, link)
    participant.refresh_from_db()
    assert participant.code_shown_at == shown_at, "recorded once"
    # Coming back by the link leads to the same end.
    assert client.get(enter_url(link, "pid-A"), follow=True).redirect_chain[-1][0].endswith("/end/")


def test_item_quota_ends_after_that_many_items_skips_included_when_the_link_says_so(project, lead):
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Two",
        completion_code="QUOTA-2",
        items_per_participant=2,
        skips_count_toward_quota=True,
    )
    client = Client()
    enter(client, link, "pid-A")
    first = current_item(client, project)
    label(client, project, first)
    second = current_item(client, project)
    skipped = client.post(
        reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": second.pk}), {"skip_reason": "unclear"}
    )
    assert skipped.status_code == 302
    assert current_item(client, project) is None
    assert "QUOTA-2" in end_page(client, link)
    assert Annotation.objects.filter(annotator__study_participant__isnull=False).count() == 1


def test_by_default_skips_do_not_count_toward_the_quota(project, lead):
    link = study_link_create(
        project=project, created_by=lead, name="Two", completion_code="QUOTA-2", items_per_participant=2
    )
    client = Client()
    enter(client, link, "pid-A")
    label(client, project, current_item(client, project))
    second = current_item(client, project)
    client.post(
        reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": second.pk}), {"skip_reason": "unclear"}
    )
    third = current_item(client, project)
    assert third is not None, "a skip leaves the quota one label short"
    assert third != second
    assert client.get(reverse("study_end", kwargs={"token": link.token})).status_code == 302
    label(client, project, third)
    assert current_item(client, project) is None
    assert "QUOTA-2" in end_page(client, link)


def test_htmx_save_of_the_last_item_sends_the_browser_to_the_end_page(project, lead):
    link = study_link_create(
        project=project, created_by=lead, name="One", completion_code="ONE-1", items_per_participant=1
    )
    client = Client()
    enter(client, link, "pid-A")
    item = current_item(client, project)
    response = client.post(item_url(project, item), ifs_form(item), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("study_end", kwargs={"token": link.token})


def test_an_active_participant_on_the_end_page_is_sent_back_to_work(project, lead):
    link = study_link_create(project=project, created_by=lead, name="All")
    client = Client()
    enter(client, link, "pid-A")
    response = client.get(reverse("study_end", kwargs={"token": link.token}))
    assert response.status_code == 302
    assert response["Location"] == next_url(project)
    assert link.completion_code not in response.content.decode()


@pytest.mark.parametrize("who", ["annotator_client", "lead_client", "outsider_client"])
def test_the_end_page_belongs_to_participants_only(project, lead, who, request):
    link = study_link_create(project=project, created_by=lead, name="All", completion_code="SECRET-9")
    response = request.getfixturevalue(who).get(reverse("study_end", kwargs={"token": link.token}))
    assert response.status_code == 404
    assert "SECRET-9" not in response.content.decode()


def test_regular_annotators_keep_the_normal_queue_end(project, lead, annotator_client):
    study_link_create(project=project, created_by=lead, name="All")
    for item in project.items.all():
        annotator_client.post(item_url(project, item), ifs_form(item))
    response = annotator_client.get(next_url(project))
    assert response.status_code == 200
    assert "Nothing left for you" in response.content.decode()
