"""The new-project page: reachable from the home page for those project_create_allowed lets in (404 for others),
creates through projects.services.project_create with criteria rows (weights and descriptions), previews the
guidelines with the project's markdown renderer, adds and removes criterion rows, copies another led project's
settings, and refuses bad settings with the service's sentences, writing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission

from projects.models import Criterion, Membership, Project
from projects.selectors import project_create_allowed
from tests.factories import MembershipFactory, ProjectFactory

URL = "/projects/new/"


def _post(**overrides: Any) -> dict[str, Any]:
    data = {
        "name": "Helpfulness study",
        "description": "",
        "mode": "likert",
        "likert_points": "5",
        "tie_tolerance": "0.1",
        "overlap": "2",
        "suggestion_display": "blind_sample",
        "blind_rate": "0.25",
        "minimum_blind_sample": "10",
        "handoff_rule": "lower_bound",
        "handoff_agreement_threshold": "0.85",
        "handoff_minimum_blind_comparisons": "15",
        "guidelines": "Prefer the **honest** answer.",
        "criteria-TOTAL_FORMS": "2",
        "criteria-INITIAL_FORMS": "0",
        "criteria-0-name": "helpful",
        "criteria-0-weight": "0.6",
        "criteria-0-description": "Does it answer the question?",
        "criteria-1-name": "harmless",
        "criteria-1-weight": "0.4",
        "criteria-1-description": "",
        "action": "create",
    }
    data.update(overrides)
    return data


@pytest.fixture
def creator(lead):
    lead.is_staff = True
    lead.save(update_fields=["is_staff"])
    return lead


def test_who_may_create(lead, annotator, settings):
    settings.PROJECT_CREATORS = "staff"
    assert not project_create_allowed(annotator)
    annotator.user_permissions.add(Permission.objects.get(codename="add_project"))
    annotator = type(annotator).objects.get(pk=annotator.pk)  # permissions are cached on the object
    assert project_create_allowed(annotator)
    assert not project_create_allowed(lead)
    settings.PROJECT_CREATORS = "everyone"
    assert project_create_allowed(lead)


def test_the_page_is_404_for_those_who_may_not_create(lead_client, settings):
    settings.PROJECT_CREATORS = "staff"
    assert lead_client.get(URL).status_code == 404
    assert lead_client.post(URL, _post()).status_code == 404
    assert not Project.objects.exists()
    assert b"project_new" not in lead_client.get("/").content
    assert b'id="empty-new-project"' not in lead_client.get("/").content


def test_a_lead_creates_a_project_with_two_criteria(creator, lead_client):
    home = lead_client.get("/").content.decode()
    assert 'id="empty-new-project"' in home
    assert 'id="nav-new-project"' in home
    page = lead_client.get(URL).content.decode()
    assert 'name="criteria-0-name"' in page
    assert 'value="overall"' in page

    response = lead_client.post(URL, _post())

    project = Project.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/projects/{project.pk}/people/"
    assert (project.mode, project.likert_points, project.overlap, project.blind_rate) == ("likert", 5, 2, 0.25)
    assert (project.handoff_rule, project.handoff_agreement_threshold) == ("lower_bound", 0.85)
    assert project.guidelines == "Prefer the **honest** answer."
    criteria = list(Criterion.objects.filter(project=project).values_list("name", "weight", "description"))
    assert criteria == [("helpful", 0.6, "Does it answer the question?"), ("harmless", 0.4, "")]
    assert Membership.objects.get(project=project).user == creator
    assert Membership.objects.get(project=project).role == "lead"


def test_bad_settings_are_refused_with_the_service_sentences(creator, lead_client):
    response = lead_client.post(URL, _post(likert_points="4", tie_tolerance="3"))
    assert response.status_code == 400
    assert "Select a valid choice. 4 is not one of the available choices." in response.content.decode()
    assert not Project.objects.exists()

    response = lead_client.post(URL, _post(**{"criteria-1-weight": "0.1"}))
    assert response.status_code == 400
    assert "Criterion weights must sum to 1 (they sum to 0.7)." in response.content.decode()
    assert not Project.objects.exists()


def test_rows_are_added_and_removed_and_the_guidelines_previewed(creator, lead_client):
    added = lead_client.post(URL, _post(action="add_criterion")).content.decode()
    assert 'name="criteria-2-name"' in added
    assert 'value="helpful"' in added
    assert 'value="harmless"' in added
    assert "errorlist" not in added

    removed = lead_client.post(URL, _post(action="remove_criteria", **{"criteria-0-DELETE": "on"})).content.decode()
    assert 'value="helpful"' not in removed
    assert 'name="criteria-1-name"' not in removed

    preview = lead_client.post(URL, _post(action="preview", guidelines="Be **kind**\n\n<script>x</script>"))
    assert "<strong>kind</strong>" in preview.content.decode()
    assert "<script>x" not in preview.content.decode()
    fragment = lead_client.post(URL, _post(action="preview"), headers={"HX-Request": "true"}).content.decode()
    assert fragment.startswith('<div id="guidelines-preview"')
    assert "<html" not in fragment
    assert not Project.objects.exists()


def test_settings_are_copied_from_a_project_the_user_leads(creator, lead_client, other_project):
    source = ProjectFactory(name="Source", mode="binary", overlap=4, repeat_rate=0.1, llm_api_key="secret-key")
    MembershipFactory(project=source, user=creator, role=Membership.Role.LEAD)
    Criterion.objects.filter(project=source).delete()
    Criterion.objects.create(project=source, name="accuracy", weight=1.0, description="Facts right", position=0)

    page = lead_client.get(URL, {"copy_from": source.pk}).content.decode()
    assert 'value="accuracy"' in page
    assert "Facts right" in page
    assert 'value="4"' in page
    assert lead_client.get(URL, {"copy_from": other_project.pk}).status_code == 404

    data = _post(copy_from=str(source.pk), mode="binary", overlap="4", name="Copy")
    data.update({"criteria-TOTAL_FORMS": "1", "criteria-0-name": "accuracy", "criteria-0-weight": "1"})
    assert lead_client.post(URL, data).status_code == 302

    copy = Project.objects.get(name="Copy")
    assert (copy.mode, copy.overlap, copy.repeat_rate) == ("binary", 4, 0.1)
    assert copy.llm_api_key == ""
    assert not copy.items.exists()
