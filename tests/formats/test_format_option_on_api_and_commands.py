"""The format option reaches the converters from the import API and from the management commands."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from projects.models import Membership, Project
from tests.factories import MembershipFactory, ProjectFactory
from tests.formats.helpers import DATA, snapshot, stored_labels

pytestmark = pytest.mark.django_db


def _upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (DATA / name).read_bytes())


def test_label_studio_export_through_the_api(lead, lead_client, django_capture_on_commit_callbacks, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)

    for endpoint in ("items", "labels"):
        with django_capture_on_commit_callbacks(execute=True):
            response = lead_client.post(
                f"/api/projects/{project.pk}/{endpoint}/import/",
                {"file": _upload("label_studio_pairwise.json"), "format": "label-studio"},
            )
        assert response.status_code == 202
        job = lead_client.get(response.json()["url"]).json()
        assert job["status"] == "done", job

    assert stored_labels(project)[("11", "label-studio-2")] == 1
    assert snapshot(project) == (2, 3)


def test_a_bad_file_fails_the_job_naming_the_task(
    lead, lead_client, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)

    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(
            f"/api/projects/{project.pk}/items/import/",
            {"file": _upload("label_studio_bad.json"), "format": "label-studio"},
        )

    job = lead_client.get(response.json()["url"]).json()
    assert job["status"] == "failed"
    assert job["errors"][0]["line"] == 3
    assert job["errors"][0]["message"].startswith("task 3 (id 13): Label Studio task data has no pair of responses")
    assert snapshot(project) == (0, 0)


def test_an_unknown_format_is_refused(lead, lead_client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)

    response = lead_client.post(
        f"/api/projects/{project.pk}/items/import/", {"file": _upload("potato_data.jsonl"), "format": "prodigy"}
    )

    assert response.status_code == 400
    assert "format" in response.json()["errors"]


def test_commands_take_the_format(capsys):
    project = ProjectFactory(mode=Project.Mode.BINARY, slug="from-potato")

    call_command("import_items", "from-potato", str(DATA / "potato_data.jsonl"), "--format", "potato")
    call_command("import_labels", "from-potato", str(DATA / "potato_pairwise.jsonl"), "--format", "potato")

    assert snapshot(project) == (3, 4)
    # Line 1 gives again a label the first import wrote: that is a no-op or a revision, never an error.
    with pytest.raises(CommandError, match="3 bad row"):
        call_command("import_labels", "from-potato", str(DATA / "potato_bad.jsonl"), "--format", "potato")
    err = capsys.readouterr().err
    assert "line 1:" not in err
    assert "line 2: Potato pairwise selection 'C'" in err
    assert snapshot(project) == (3, 4)
