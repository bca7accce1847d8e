"""The members API answers the same for a name nobody has and a name that may not be added (a study participant, a
deactivated account), and anyone who is not a lead of the project gets one 404 whatever the name: no one can learn
which usernames exist through it."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotation.crowd.services import ParticipantIds, participant_enter, study_link_create
from projects.models import Membership
from tests.factories import UserFactory


def _add(client: Client, project, username: str):
    return client.post(
        f"/api/projects/{project.pk}/members/",
        json.dumps({"username": username, "role": "annotator"}),
        content_type="application/json",
    )


@pytest.fixture
def names(project, lead):
    link = study_link_create(project=project, created_by=lead, name="Wave")
    participant, _ = participant_enter(link=link, ids=ParticipantIds(participant="pid-1"))
    UserFactory(username="gone", is_active=False)
    UserFactory(username="real-person")
    return {"participant": participant.user.username, "inactive": "gone", "unknown": "nobody-has-this"}


def test_a_lead_gets_one_answer_for_unknown_and_not_allowed(project, lead, names):
    client = Client()
    client.force_login(lead)
    answers = {kind: _add(client, project, name) for kind, name in names.items()}
    assert {r.status_code for r in answers.values()} == {400}
    assert len({r.content for r in answers.values()}) == 1, {k: r.content for k, r in answers.items()}
    assert not Membership.objects.filter(project=project, user__username="gone").exists()
    assert _add(client, project, "real-person").status_code == 201, "an ordinary account is added"


def test_a_non_lead_gets_one_404_for_any_name(project, annotator, names):
    client = Client()
    client.force_login(annotator)
    answers = [_add(client, project, name) for name in [*names.values(), "real-person", "lead"]]
    assert {r.status_code for r in answers} == {404}
    assert len({r.content for r in answers}) == 1
