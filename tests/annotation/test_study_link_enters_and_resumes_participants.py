"""A study link lets a crowd participant in without a login: the first visit makes a member, a revisit with the same
id resumes, a second participant id on the same browser session is refused and nothing is created, bad ids are
named, and closed or full links take no newcomers."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from projects.models import Membership
from tests.annotation.study_helpers import current_item, enter, enter_url, label
from tests.factories import ProjectFactory

User = get_user_model()


@pytest.fixture
def link(project, lead):
    return study_link_create(project=project, created_by=lead, name="Pilot", completion_code="DONE-123")


def _counts():
    return User.objects.count(), Membership.objects.count(), Participant.objects.count()


def test_first_visit_makes_a_login_less_annotator_and_logs_them_in(project, link):
    client = Client()
    enter(client, link, "5f3a9c0e1b2d4f6a8c0e1b2d")
    participant = Participant.objects.get()
    assert participant.link == link
    assert (participant.external_id, participant.study_id) == ("5f3a9c0e1b2d4f6a8c0e1b2d", "study-1")
    assert participant.session_id == "session-5f3a9c0e1b2d4f6a8c0e1b2d"
    assert participant.status == Participant.Status.ACTIVE
    user = participant.user
    assert not user.has_usable_password()
    assert Membership.objects.get(project=project, user=user).role == Membership.Role.ANNOTATOR
    assert current_item(client, project) is not None, "logged in: the normal annotation page serves them"


def test_generic_parameter_names_work_too(project, link):
    client = Client()
    response = client.get(enter_url(link, None, participant="worker-7", study="s9", session="x1"))
    assert response.status_code == 302
    participant = Participant.objects.get()
    assert (participant.external_id, participant.study_id, participant.session_id) == ("worker-7", "s9", "x1")


def test_revisit_with_the_same_id_resumes_even_from_another_browser(project, link):
    first = Client()
    enter(first, link, "pid-A")
    item = current_item(first, project)
    label(first, project, item)
    before = _counts()

    enter(first, link, "pid-A")  # same session
    second = Client()
    enter(second, link, "pid-A")  # the platform sends them back in a new browser
    assert _counts() == before
    resumed = current_item(second, project)
    assert resumed is not None
    assert resumed != item, "the labelled item is not served again"


def test_a_second_participant_id_on_the_same_session_is_refused(project, link):
    client = Client()
    enter(client, link, "pid-A")
    before = _counts()
    response = client.get(enter_url(link, "pid-B"))
    assert response.status_code == 403
    assert "already taking part" in response.content.decode()
    assert "pid-A" in response.content.decode()
    assert _counts() == before
    assert not Participant.objects.filter(external_id="pid-B").exists()


def test_a_second_link_on_the_same_session_is_refused(project, lead, link):
    other = study_link_create(project=project, created_by=lead, name="Second wave")
    client = Client()
    enter(client, link, "pid-A")
    before = _counts()
    assert client.get(enter_url(other, "pid-A")).status_code == 403
    assert _counts() == before


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({}, "needs a participant id"),
        ({"PROLIFIC_PID": "x" * 65}, "PROLIFIC_PID is too long (65 characters; at most 64)"),
        ({"PROLIFIC_PID": "a b"}, "PROLIFIC_PID may only contain letters, digits"),
        ({"PROLIFIC_PID": "<script>"}, "PROLIFIC_PID may only contain letters, digits"),
        ({"participant": "ok", "STUDY_ID": "s" * 70}, "STUDY_ID is too long"),
        ({"participant": "ok", "session": "a;b"}, "session may only contain"),
    ],
)
def test_bad_ids_are_named_and_create_nothing(project, link, query, message):
    before = _counts()
    response = Client().get(enter_url(link, None, **query))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert _counts() == before


def test_unknown_token_is_404(project, link):
    response = Client().get(enter_url(link, "pid-A").replace(link.token, link.token[:-2] + "zz"))
    assert response.status_code == 404


def test_closed_link_refuses_newcomers_but_lets_returning_participants_resume(project, link):
    returning = Client()
    enter(returning, link, "pid-A")
    link.active = False
    link.save(update_fields=["active"])
    before = _counts()
    refused = Client().get(enter_url(link, "pid-B"))
    assert refused.status_code == 403
    assert "closed" in refused.content.decode()
    assert _counts() == before
    enter(Client(), link, "pid-A")


def test_full_link_refuses_the_next_newcomer(project, lead):
    link = study_link_create(project=project, created_by=lead, name="Small", max_participants=1)
    enter(Client(), link, "pid-A")
    refused = Client().get(enter_url(link, "pid-B"))
    assert refused.status_code == 403
    assert "full" in refused.content.decode()
    assert Participant.objects.count() == 1


def test_a_signed_in_member_is_not_turned_into_a_participant(project, link, annotator_client):
    before = _counts()
    response = annotator_client.get(enter_url(link, "pid-A"))
    assert response.status_code == 403
    assert "private window" in response.content.decode()
    assert _counts() == before


def test_participant_cannot_reach_another_project(project, link):
    other = ProjectFactory(name="Other")
    client = Client()
    enter(client, link, "pid-A")
    assert client.get(f"/projects/{other.pk}/annotate/").status_code == 404
    assert client.get(f"/projects/{project.pk}/dashboard/").status_code == 404
