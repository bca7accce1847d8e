"""Who may create a project is a setting (PROJECT_CREATORS), asked through one function, project_create_allowed:
by default staff and accounts granted "Can add project" (directly or through a group); with "everyone", any signed-in
account. A refusal is a 403 that says how to get the right, and creates nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission
from rest_framework.test import APIClient

from projects.models import Project
from projects.selectors import project_create_allowed
from tests.factories import UserFactory


def _add_project() -> Permission:
    return Permission.objects.get(codename="add_project", content_type__app_label="projects")


def _create(user) -> int:
    client = APIClient()
    client.force_authenticate(user)
    response = client.post("/api/projects/", json.dumps({"name": "Door"}), content_type="application/json")
    return response.status_code


@pytest.mark.django_db
def test_by_default_only_staff_and_granted_accounts_create():
    plain, staff, granted, grouped = (UserFactory(username=n) for n in ("plain", "staff", "granted", "grouped"))
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    granted.user_permissions.add(_add_project())
    group = Group.objects.create(name="Project creators")
    group.permissions.add(_add_project())
    grouped.groups.add(group)
    assert not project_create_allowed(AnonymousUser())
    assert not project_create_allowed(plain)
    assert [project_create_allowed(u) for u in (staff, granted, grouped)] == [True, True, True]
    assert _create(plain) == 403
    assert not Project.objects.exists()
    assert _create(granted) == 201


@pytest.mark.django_db
def test_the_refusal_says_how_to_get_the_right():
    client = APIClient()
    client.force_authenticate(UserFactory(username="asks"))
    response = client.post("/api/projects/", json.dumps({"name": "Door"}), content_type="application/json")
    assert response.status_code == 403
    assert "Can add project" in response.json()["detail"]


@pytest.mark.django_db
def test_everyone_lets_any_signed_in_account_create(settings):
    settings.PROJECT_CREATORS = "everyone"
    person = UserFactory(username="anyone")
    assert project_create_allowed(person)
    assert _create(person) == 201
    inactive = UserFactory(username="gone", is_active=False)
    assert not project_create_allowed(inactive)
