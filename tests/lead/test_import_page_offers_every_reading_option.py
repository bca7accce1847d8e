"""The import page takes every reading option the import API takes (statuses, scale, items_key, scheme, ratings
rule, on duplicate), shows the job's notes on how the file was read, and answers an over-limit upload with the API's
413 sentence (the body is never read)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from projects.models import Job, Membership, Project
from tests.factories import MembershipFactory, ProjectFactory

REAL = Path(__file__).parents[1] / "formats" / "data" / "real"


@pytest.fixture
def likert_project(lead, annotator, settings, tmp_path) -> Project:
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=7)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    return project


def _upload(client, project, kind: str, name: str, capture, **fields):
    upload = SimpleUploadedFile(name, (REAL / name).read_bytes())
    with capture(execute=True):
        return client.post(
            f"/projects/{project.pk}/import/",
            {"kind": kind, "file": upload, "on_duplicate": "reject", "trl_chosen_as": "gold", **fields},
        )


def test_a_potato_scale_and_items_key_import_from_the_page(
    likert_project, lead_client, django_capture_on_commit_callbacks
):
    page = lead_client.get(f"/projects/{likert_project.pk}/import/").content.decode()
    for name in ("statuses", "scale", "items_key", "scheme", "ratings_rule", "on_duplicate"):
        assert f'name="{name}"' in page

    items = _upload(lead_client, likert_project, "import_items", "potato_llm_responses.json",
                    django_capture_on_commit_callbacks, format="potato", items_key="responses")  # fmt: skip
    assert items.status_code == 302, items.content.decode()[:2000]
    dry_items = Job.objects.get(project=likert_project, kind=Job.Kind.IMPORT_ITEMS)
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(f"/projects/{likert_project.pk}/import/{dry_items.pk}/run/")
    labels = _upload(lead_client, likert_project, "import_labels", "potato_llm_preference_annotations.jsonl",
                     django_capture_on_commit_callbacks, format="potato", scheme="overall_preference",
                     scale="1..6", statuses=["submitted"])  # fmt: skip

    assert labels.status_code == 302
    job = Job.objects.get(project=likert_project, kind=Job.Kind.IMPORT_LABELS)
    assert job.options["scale"] == "1..6"
    assert job.options["scheme"] == "overall_preference"
    assert job.options["statuses"] == ["submitted"]
    assert job.status == Job.Status.DONE, job.errors
    assert job.result["valid"] is True


def test_a_bad_scale_is_refused_on_its_field(likert_project, lead_client, django_capture_on_commit_callbacks):
    response = _upload(lead_client, likert_project, "import_labels", "potato_llm_preference_annotations.jsonl",
                       django_capture_on_commit_callbacks, format="potato", scale="six")  # fmt: skip

    assert response.status_code == 400
    assert "min..max" in response.content.decode()
    assert not Job.objects.filter(project=likert_project).exists()


def test_the_job_page_shows_how_the_file_was_read(likert_project, lead_client):
    job = Job.objects.create(
        project=likert_project,
        kind=Job.Kind.IMPORT_LABELS,
        status=Job.Status.DONE,
        options={"dry_run": True},
        result={"format": "hf", "format_reason": "chosen/rejected columns", "valid": True,
                "notes": ["One rating per response became a choice of the higher-rated response."]},
    )  # fmt: skip

    page = lead_client.get(f"/projects/{likert_project.pk}/import/{job.pk}/").content.decode()

    assert 'id="import-notes"' in page
    assert "became a choice of the higher-rated response" in page


def test_an_upload_far_over_the_limit_answers_the_api_sentence_with_413(
    likert_project, lead_client, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_MAX_UPLOAD_MB = 1
    body = b"x" * (2 * 1024**2)
    with django_capture_on_commit_callbacks(execute=True):
        page = lead_client.post(
            f"/projects/{likert_project.pk}/import/",
            {"kind": "import_items", "format": "auto", "file": SimpleUploadedFile("big.jsonl", body)},
        )
        api = lead_client.post(
            f"/api/projects/{likert_project.pk}/items/import/", {"file": SimpleUploadedFile("big.jsonl", body)}
        )

    assert page.status_code == 413
    assert api.status_code == 413
    sentence = api.json()["detail"]
    assert sentence.startswith("The file is 2.0 MB; imports take files up to 1 MB")
    assert escape(sentence) in page.content.decode()
    assert not Job.objects.exists()
