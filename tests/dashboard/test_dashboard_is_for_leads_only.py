import pytest
from django.urls import reverse


@pytest.mark.parametrize("name", ["dashboard", "project_settings"])
def test_lead_reads_the_page(lead_client, project, name):
    response = lead_client.get(reverse(name, kwargs={"project_id": project.pk}))
    assert response.status_code == 200
    assert project.name in response.content.decode()


@pytest.mark.parametrize("name", ["dashboard", "project_settings"])
@pytest.mark.parametrize("persona", ["annotator_client", "outsider_client"])
def test_annotators_and_outsiders_get_404(request, project, name, persona):
    client = request.getfixturevalue(persona)
    response = client.get(reverse(name, kwargs={"project_id": project.pk}))
    assert response.status_code == 404


@pytest.mark.parametrize("persona", ["annotator_client", "outsider_client"])
def test_item_review_is_404_for_non_leads(request, project, persona):
    item = project.items.first()
    url = reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})
    assert request.getfixturevalue(persona).get(url).status_code == 404


def test_item_of_another_project_is_404_for_the_lead(lead_client, project, other_project):
    item = other_project.items.first()
    url = reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})
    assert lead_client.get(url).status_code == 404


def test_anonymous_is_sent_to_login(client, project):
    url = reverse("dashboard", kwargs={"project_id": project.pk})
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_outsider_cannot_change_settings(outsider_client, project):
    url = reverse("project_settings", kwargs={"project_id": project.pk})
    response = outsider_client.post(url, {"form": "member", "username": "outsider", "role": "lead"})
    assert response.status_code == 404
    assert not project.memberships.filter(user__username="outsider").exists()
