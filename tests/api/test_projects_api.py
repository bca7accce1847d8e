"""Projects through the API: the creator leads, leads configure through the service, errors name their field."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from rest_framework.test import APIClient

from projects.models import Membership, Project

JSON = {"content_type": "application/json"}


def _may_create(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="projects"))


def test_creator_becomes_lead_and_sees_the_project(outsider_client, outsider):
    _may_create(outsider)
    response = outsider_client.post(
        "/api/projects/",
        {
            "name": "New study",
            "criteria": [{"name": "helpful", "weight": 0.6}, {"name": "safe", "weight": 0.4}],
            "settings": {"mode": "binary", "overlap": 2},
        },
        **JSON,
    )

    assert response.status_code == 201
    body = response.json()
    assert body["role"] == "lead"
    assert body["mode"] == "binary"
    assert [c["name"] for c in body["criteria"]] == ["helpful", "safe"]
    assert Membership.objects.get(project_id=body["id"], user=outsider).role == Membership.Role.LEAD
    assert [p["id"] for p in outsider_client.get("/api/projects/").json()] == [body["id"]]


def test_unknown_settings_on_create_are_named(outsider_client, outsider):
    _may_create(outsider)
    response = outsider_client.post(
        "/api/projects/", {"name": "x", "settings": {"seed": 3, "lead": 1, "overlap": 2}}, **JSON
    )

    assert response.status_code == 400
    assert "lead, seed" in response.json()["errors"]["settings"][0]
    assert not Project.objects.filter(name="x").exists()


def test_list_shows_only_own_projects_with_role(project, other_project, annotator_client):
    listed = annotator_client.get("/api/projects/").json()

    assert [(p["id"], p["role"]) for p in listed] == [(project.pk, "annotator")]
    assert "llm_api_key" not in listed[0]


def test_lead_patches_settings_and_bad_values_name_the_field(project, lead_client):
    ok = lead_client.patch(f"/api/projects/{project.pk}/", {"overlap": 5}, **JSON)
    bad = lead_client.patch(f"/api/projects/{project.pk}/", {"blind_rate": 3, "likert_points": 4}, **JSON)

    assert ok.status_code == 200
    assert ok.json()["overlap"] == 5
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"blind_rate", "likert_points"}
    project.refresh_from_db()
    assert project.overlap == 5


def test_blind_rate_is_locked_once_labelling_started(project, lead_client):
    Project.objects.filter(pk=project.pk).update(labelling_started_at="2024-01-01T00:00:00Z")

    response = lead_client.patch(f"/api/projects/{project.pk}/", {"blind_rate": 0.5}, **JSON)

    assert response.status_code == 400
    assert "cannot be unseen" in response.json()["errors"]["blind_rate"][0]


def test_lead_adds_a_member_and_sets_criteria(project, lead_client):
    get_user_model().objects.create_user(username="newcomer", password="x" * 12)

    added = lead_client.post(
        f"/api/projects/{project.pk}/members/",
        {"username": "newcomer", "role": "annotator"},
        **JSON,
    )
    unknown = lead_client.post(
        f"/api/projects/{project.pk}/members/",
        {"username": "ghost", "role": "annotator"},
        **JSON,
    )
    criteria = lead_client.put(
        f"/api/projects/{project.pk}/criteria/",
        [{"name": "fluency", "weight": 0.5}, {"name": "accuracy", "weight": 0.4}],
        **JSON,
    )

    assert added.status_code == 201
    assert project.memberships.filter(user__username="newcomer", role="annotator").exists()
    assert unknown.status_code == 400
    assert "username" in unknown.json()["errors"]
    assert criteria.status_code == 400
    assert "sum to 1" in criteria.json()["errors"]["criteria"][0]


def test_token_authentication_for_scripts(project, lead):

    out = StringIO()
    call_command("api_token", lead.username, stdout=out)
    key = out.getvalue().strip()
    client = APIClient()

    assert client.get("/api/projects/").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert [p["id"] for p in client.get("/api/projects/").json()] == [project.pk]
    again = StringIO()
    call_command("api_token", lead.username, stdout=again)
    assert again.getvalue().strip() == key
