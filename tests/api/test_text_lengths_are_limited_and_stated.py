"""Every text a client writes has a limit: a megabyte of project description is refused by name and nothing is
stored; the limits of the study-link and annotation fields are stated in the OpenAPI schema."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from projects.models import Project


def test_a_megabyte_of_description_is_refused(project, lead_client):
    response = lead_client.patch(
        f"/api/projects/{project.pk}/", json.dumps({"description": "x" * 1_000_000}), content_type="application/json"
    )
    assert response.status_code == 400
    assert "At most 20000 characters" in json.dumps(response.json())
    assert Project.objects.get(pk=project.pk).description != "x" * 1_000_000


def test_a_long_but_allowed_description_is_kept(project, lead_client):
    response = lead_client.patch(
        f"/api/projects/{project.pk}/", json.dumps({"description": "y" * 20_000}), content_type="application/json"
    )
    assert response.status_code == 200
    assert Project.objects.get(pk=project.pk).description == "y" * 20_000


@pytest.mark.django_db
def test_the_schema_states_the_limits():
    schema = Client().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]
    link = next(body for name, body in components.items() if name.startswith("StudyLinkCreate"))
    limits = {"completion_code": 64, "consent_text": 20_000, "completion_url": 500, "return_code": 64}
    for field, limit in limits.items():
        assert link["properties"][field]["maxLength"] == limit, field
    value = next(body for name, body in components.items() if name.startswith("Value"))
    assert value["properties"]["criterion"]["maxLength"] == 100
