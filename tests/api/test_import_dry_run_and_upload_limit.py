"""The import API's dry run (every record checked, the format detected, the first rows previewed, nothing written)
and its upload limit (413 with the limit named)."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation
from projects.models import ImportedAnnotator, Item


def _post(client, project, kind: str, text: str, capture, **options):
    with capture(execute=True):
        return client.post(
            f"/api/projects/{project.pk}/{kind}/import/",
            {"file": SimpleUploadedFile("rows.jsonl", text.encode()), **options},
        )


def _items(n: int) -> str:
    return "".join(
        json.dumps({"id": f"d{i}", "prompt": f"P{i}", "responses": [{"text": "a", "model": "m1"}, "b"],
                    "metadata": {"topic": "t", "expert_note": "secret"}}) + "\n"
        for i in range(n)
    )  # fmt: skip


def test_a_dry_run_reports_and_previews_but_writes_nothing(project, lead_client, django_capture_on_commit_callbacks):
    response = _post(lead_client, project, "items", _items(7), django_capture_on_commit_callbacks, dry_run="true",
                     format="auto")  # fmt: skip

    job = lead_client.get(response.json()["url"]).json()
    assert job["status"] == "done", job
    result = job["result"]
    assert (result["dry_run"], result["valid"], result["created"], result["format"]) == (True, True, 7, "native")
    assert len(result["preview"]) == 5
    first = result["preview"][0]
    assert first["responses"][0]["model"] == "m1"
    assert (first["metadata"], first["lead_metadata"]) == (["topic"], ["expert_note"])
    assert not Item.objects.filter(project=project, external_id__startswith="d").exists()


def test_a_dry_run_names_bad_records_by_line(project, lead_client, django_capture_on_commit_callbacks):
    text = _items(2) + "{broken\n"
    response = _post(lead_client, project, "items", text, django_capture_on_commit_callbacks, dry_run="true")

    job = lead_client.get(response.json()["url"]).json()
    assert job["status"] == "done"
    assert job["result"]["valid"] is False
    assert [e["line"] for e in job["errors"]] == [3]


def test_a_label_dry_run_creates_no_identity(project, lead_client, django_capture_on_commit_callbacks):
    item = project.items.order_by("id").first()
    row = {"item": item.external_id, "annotator": "zed", "mode": "ifs",
           "values": [{"position": 0, "mu": 0.5, "nu": 0.1}, {"position": 1, "mu": 0.1, "nu": 0.5}]}  # fmt: skip
    response = _post(lead_client, project, "labels", json.dumps(row), django_capture_on_commit_callbacks,
                     dry_run="true")  # fmt: skip

    job = lead_client.get(response.json()["url"]).json()
    assert job["result"]["created"] == 1
    assert job["result"]["identities_created"] == 1
    assert job["result"]["preview"][0]["annotator"] == "zed"
    assert not ImportedAnnotator.objects.exists()
    assert not Annotation.objects.exists()


def test_an_upload_over_the_limit_is_refused_with_413(project, lead_client, settings):
    settings.IMPORT_MAX_UPLOAD_MB = 1
    big = "x" * (1024**2 + 1)

    for kind in ("items", "labels"):
        response = lead_client.post(
            f"/api/projects/{project.pk}/{kind}/import/", {"file": SimpleUploadedFile("big.jsonl", big.encode())}
        )
        assert response.status_code == 413
        assert "up to 1 MB" in response.json()["detail"]
    assert not project.jobs.exists()


def test_the_converter_choices_travel_with_the_job(project, lead_client):
    response = lead_client.post(
        f"/api/projects/{project.pk}/labels/import/",
        {"file": SimpleUploadedFile("l.json", b"[]"), "format": "label-studio", "ratings_rule": "likert",
         "scheme": "preference"},
    )  # fmt: skip

    assert response.status_code == 202
    job = project.jobs.get()
    assert (job.options["ratings_rule"], job.options["scheme"]) == ("likert", "preference")
    refused = lead_client.post(
        f"/api/projects/{project.pk}/labels/import/",
        {"file": SimpleUploadedFile("l.json", b"[]"), "ratings_rule": "average"},
    )
    assert refused.status_code == 400
    assert "ratings_rule" in refused.json()["errors"]
