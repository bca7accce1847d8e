"""The method-study setup (form and API) takes a repeat rate and stores it as the project's one repeat setting;
a rate out of the setting's bounds is refused and nothing is planned."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import StudyCell
from projects.models import Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory


@pytest.fixture
def unplanned(db):
    project = ProjectFactory(name="Methods", repeat_rate=0.1)
    lead = UserFactory(username="study-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"p{i}") for i in range(3)]
    for person in people:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(6, project=project)
    client = Client()
    client.force_login(lead)
    return project, client, [p.pk for p in people]


def test_the_form_stores_the_repeat_rate_on_the_project(unplanned):
    project, client, people = unplanned
    page = client.get(f"/projects/{project.pk}/method-study/")
    assert b'name="repeat_rate"' in page.content
    body = {"methods": ["binary", "ifs"], "annotator_ids": people, "repeat_rate": "0.25"}
    assert client.post(f"/projects/{project.pk}/method-study/", body).status_code == 302
    project.refresh_from_db()
    assert (project.mode, project.repeat_rate) == (Project.Mode.CROSSOVER, 0.25)


def test_the_api_stores_the_repeat_rate_and_refuses_one_out_of_bounds(unplanned):
    project, client, people = unplanned
    url = f"/api/projects/{project.pk}/method-study/"
    body = {"methods": ["binary", "ifs"], "annotator_ids": people, "repeat_rate": 0.9}
    assert client.post(url, body, content_type="application/json").status_code == 400
    assert not StudyCell.objects.exists()
    project.refresh_from_db()
    assert project.repeat_rate == 0.1
    created = client.post(url, {**body, "repeat_rate": 0.3}, content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["study"]["repeat_rate"] == 0.3
    project.refresh_from_db()
    assert project.repeat_rate == 0.3


def test_without_a_rate_the_project_keeps_its_own(unplanned):
    project, client, people = unplanned
    body = {"methods": ["binary", "ifs"], "annotator_ids": people}
    assert (
        client.post(f"/api/projects/{project.pk}/method-study/", body, content_type="application/json").status_code
        == 201
    )
    project.refresh_from_db()
    assert project.repeat_rate == 0.1
