"""The REST API refuses a study participant by its own authentication classes, so it stays closed to them even in a
configuration that leaves out the participant gate middleware: their session and any token they were given."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from tests.annotation.study_helpers import enter_url

GATE = "annotation.crowd.gate.ParticipantGateMiddleware"


@pytest.fixture
def without_gate():
    from django.test import override_settings

    assert GATE in settings.MIDDLEWARE
    with override_settings(MIDDLEWARE=[m for m in settings.MIDDLEWARE if m != GATE]):
        yield


@pytest.fixture
def participant_client(project, lead, without_gate):
    link = study_link_create(project=project, created_by=lead, name="Open")
    client = Client()
    assert client.get(enter_url(link, "api-prober")).status_code == 302
    return client


def _api_calls(project):
    return [
        ("get", "/api/projects/", None),
        ("get", f"/api/projects/{project.pk}/", None),
        ("get", f"/api/projects/{project.pk}/items/", None),
        ("post", "/api/projects/", {"name": "Mine"}),
        (
            "post",
            f"/api/projects/{project.pk}/annotations/",
            {"item": project.items.first().pk, "values": [{"position": 0, "mu": 0.6, "nu": 0.2}]},
        ),
    ]


def test_a_participants_session_is_refused_without_the_gate(project, participant_client):
    for method, url, body in _api_calls(project):
        kwargs = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
        response = getattr(participant_client, method)(url, **kwargs)
        assert response.status_code == 404, (method, url, response.status_code)
    assert project.annotations.filter(annotator__study_participant__external_id="api-prober").count() == 0


def test_a_participants_token_is_refused_without_the_gate(project, participant_client):
    participant = Participant.objects.get(external_id="api-prober")
    token = Token.objects.create(user=participant.user)
    bare = Client()
    for method, url, body in _api_calls(project):
        kwargs = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
        response = getattr(bare, method)(url, headers={"Authorization": f"Token {token.key}"}, **kwargs)
        assert response.status_code == 401, (method, url, response.status_code)


def test_a_members_token_still_works_without_the_gate(project, lead, without_gate):
    token = Token.objects.create(user=lead)
    response = Client().get(f"/api/projects/{project.pk}/", headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 200
