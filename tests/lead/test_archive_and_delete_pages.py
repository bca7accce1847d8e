"""Archive and delete from the settings page: each asks first and says what is kept; archive closes labelling and
keeps every row; delete needs the project's name typed and removes the project's rows but not the accounts; both are
404 to annotators and outsiders."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from projects.models import Item, Membership, Project


def test_archive_asks_then_closes_labelling_and_keeps_everything(project, lead_client):
    items = project.items.count()
    page = lead_client.get(f"/projects/{project.pk}/archive/").content.decode()
    assert "What is kept:" in page
    assert Project.objects.get(pk=project.pk).phase == "collecting"

    response = lead_client.post(f"/projects/{project.pk}/archive/")

    assert response.status_code == 302
    project.refresh_from_db()
    assert project.phase == Project.Phase.CLOSED
    assert project.items.count() == items
    assert "Archived" in lead_client.get("/").content.decode()
    assert lead_client.post(f"/projects/{project.pk}/archive/").status_code == 400


def test_delete_needs_the_name_and_keeps_the_accounts(project, lead_client, annotator):
    users = get_user_model().objects.count()
    page = lead_client.get(f"/projects/{project.pk}/delete/").content.decode()
    assert "What is kept:" in page
    assert "6 items" in page

    wrong = lead_client.post(f"/projects/{project.pk}/delete/", {"confirmation": "demo"})
    assert wrong.status_code == 400
    assert "Type the project" in wrong.content.decode()
    assert Project.objects.filter(pk=project.pk).exists()

    done = lead_client.post(f"/projects/{project.pk}/delete/", {"confirmation": project.name})

    assert done.status_code == 302
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not Item.objects.filter(project_id=project.pk).exists()
    assert not Membership.objects.filter(project_id=project.pk).exists()
    assert get_user_model().objects.count() == users


def test_only_leads_reach_them(project, annotator_client, outsider_client):
    for client in (annotator_client, outsider_client):
        for action in ("archive", "delete"):
            assert client.get(f"/projects/{project.pk}/{action}/").status_code == 404
            assert client.post(f"/projects/{project.pk}/{action}/", {"confirmation": project.name}).status_code == 404
    project.refresh_from_db()
    assert project.phase == "collecting"
