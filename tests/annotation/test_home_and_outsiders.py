"""The annotator's home lists their projects with their own progress; everything of a project is 404 to outsiders."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save, assignment_skip
from projects.models import Item
from tests.annotation.conftest import ifs_form


def test_home_shows_own_progress_and_start_link(project, annotator, annotator2, annotator_client):
    for user, saves in ((annotator, 2), (annotator2, 1)):
        for _ in range(saves):
            item = assignment_claim_next(project=project, annotator=user).item
            values = [{"response": p, "criterion": "overall", "mu": 500, "nu": 100} for p in (0, 1)]
            annotation_save(project=project, item=item, annotator=user, save=SaveRequest(values=values))
    item = assignment_claim_next(project=project, annotator=annotator).item
    assignment_skip(project=project, item=item, annotator=annotator, reason="unclear")
    html = annotator_client.get(reverse("home")).content.decode()
    assert "Demo" in html
    assert "<b>2</b> labelled by you" in html
    assert "<b>1</b> skipped" in html
    assert "<b>3</b> still open for you" in html
    assert reverse("annotate_next", kwargs={"project_id": project.pk}) in html
    assert "Dashboard" not in html


def test_home_query_count_does_not_grow_with_projects(annotator, annotator_client, django_assert_max_num_queries):
    from tests.factories import ItemFactory, MembershipFactory, ProjectFactory

    for n in range(5):
        other = ProjectFactory(name=f"P{n}")
        MembershipFactory(project=other, user=annotator)
        ItemFactory.create_batch(3, project=other)
    with django_assert_max_num_queries(8):
        assert annotator_client.get(reverse("home")).status_code == 200


def test_lead_sees_a_dashboard_link(project, lead_client):
    html = lead_client.get(reverse("home")).content.decode()
    assert "Dashboard" in html
    assert f"/projects/{project.pk}/dashboard/" in html
    assert "Start annotating" not in html


def test_empty_state(outsider_client):
    html = outsider_client.get(reverse("home")).content.decode()
    assert "No projects yet" in html


@pytest.mark.parametrize("method", ["get", "post"])
def test_outsiders_and_leads_get_404_on_every_annotation_url(project, outsider_client, lead_client, method):
    item = Item.objects.filter(project=project).first()
    urls = [
        reverse("annotate_next", kwargs={"project_id": project.pk}),
        reverse("annotate_previous", kwargs={"project_id": project.pk}),
        reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}),
        reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk}),
        reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk}),
    ]
    for client in (outsider_client, lead_client):
        for url in urls:
            response = getattr(client, method)(url, ifs_form(item) if method == "post" else None)
            assert response.status_code in {404, 405}, url
            if response.status_code == 405:
                assert method == "get" or url.endswith("/previous/") or url.endswith(f"/{project.pk}/annotate/")


def test_an_item_of_another_project_is_404_even_for_a_member(project, other_project, annotator_client):
    foreign = Item.objects.filter(project=other_project).first()
    url = reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": foreign.pk})
    assert annotator_client.get(url).status_code == 404


def test_anonymous_users_are_sent_to_log_in(project, client):
    response = client.get(reverse("annotate_next", kwargs={"project_id": project.pk}))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
