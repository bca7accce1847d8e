"""Label import never adds an existing account to a project and never files labels under a lead or a member with a
login unless the import says so; new names become login-less annotators of this project only."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.imports.labels import labels_import
from annotation.models import Annotation
from projects.imports.items import ImportRejected
from projects.models import Membership
from projects.selectors import project_get_for_user


def _row(item, annotator: str) -> str:
    return json.dumps(
        {
            "item": item.external_id,
            "annotator": annotator,
            "mode": "ifs",
            "values": [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.1, "nu": 0.7}],
        }
    )


@pytest.fixture
def items(project):
    return list(project.items.order_by("id"))


def test_a_user_of_another_project_is_refused_by_line_and_not_added(project, other_project, items):
    with pytest.raises(ImportRejected) as rejected:
        labels_import(project=project, lines=[_row(items[0], "newcomer"), _row(items[1], "elsewhere")])

    [error] = rejected.value.errors
    assert error.line == 2
    assert "elsewhere is an existing account that is not a member of this project" in error.message
    assert not Membership.objects.filter(project=project, user__username="elsewhere").exists()
    assert not Membership.objects.filter(project=project, user__username="newcomer").exists()  # rolled back
    assert Annotation.objects.count() == 0


def test_skipping_bad_rows_still_never_adds_the_outsider(project, other_project, items):
    result = labels_import(
        project=project, lines=[_row(items[0], "elsewhere"), _row(items[1], "newcomer")], skip_invalid=True
    )

    assert (result.created, result.skipped) == (1, 1)
    assert not Membership.objects.filter(project=project, user__username="elsewhere").exists()
    elsewhere = get_user_model().objects.get(username="elsewhere")
    with pytest.raises(Exception, match="No such project"):
        project_get_for_user(user=elsewhere, project_id=project.pk)


def test_a_lead_is_refused_unless_leads_are_allowed(project, items, lead):
    with pytest.raises(ImportRejected) as rejected:
        labels_import(project=project, lines=[_row(items[0], "lead")])

    assert "lead is a lead of this project" in rejected.value.errors[0].message
    assert not Annotation.objects.filter(annotator=lead).exists()

    result = labels_import(project=project, lines=[_row(items[0], "lead")], allow_leads=True)
    assert result.created == 1
    assert Annotation.objects.get(item=items[0]).annotator == lead


def test_an_annotator_with_a_login_needs_the_members_flag(project, items, annotator):
    with pytest.raises(ImportRejected, match="1 bad row"):
        labels_import(project=project, lines=[_row(items[0], "annotator")])

    assert labels_import(project=project, lines=[_row(items[0], "annotator")], allow_members=True).created == 1
    assert Annotation.objects.get(item=items[0]).annotator == annotator


def test_new_names_become_login_less_annotators_and_can_be_imported_again(project, items):
    labels_import(project=project, lines=[_row(items[0], "legacy-7")])
    user = get_user_model().objects.get(username="legacy-7")

    assert not user.has_usable_password()
    assert Membership.objects.get(project=project, user=user).role == Membership.Role.ANNOTATOR
    # A second file for the same imported annotator needs no flag: the account has no login to speak for.
    assert labels_import(project=project, lines=[_row(items[1], "legacy-7")]).created == 1


def test_the_api_passes_the_flags(
    project, items, lead_client, lead, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    upload = _row(items[0], "lead").encode()
    url = f"/api/projects/{project.pk}/labels/import/"

    with django_capture_on_commit_callbacks(execute=True):
        refused = lead_client.post(url, {"file": SimpleUploadedFile("l.jsonl", upload)})
    with django_capture_on_commit_callbacks(execute=True):
        allowed = lead_client.post(url, {"file": SimpleUploadedFile("l.jsonl", upload), "allow_leads": "true"})

    refused_job = lead_client.get(refused.json()["url"]).json()
    allowed_job = lead_client.get(allowed.json()["url"]).json()
    assert "a lead of this project" in json.dumps(refused_job)
    assert allowed_job["status"] == "done", allowed_job
    assert Annotation.objects.filter(annotator=lead).count() == 1
