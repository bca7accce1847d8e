"""Imports through the API: a file upload answers 202 with a job; the job reports progress, results, errors by line."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation
from projects.models import Item, Job


def _upload(text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("rows.jsonl", text.encode(), content_type="application/jsonl")


def _items_file(n: int, start: int = 0) -> str:
    return "".join(
        json.dumps({"id": f"new-{i}", "prompt": f"Prompt {i}", "responses": [f"a{i}", f"b{i}"]}) + "\n"
        for i in range(start, start + n)
    )


def test_item_import_job_runs_and_reports(project, lead_client, django_capture_on_commit_callbacks, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(f"/api/projects/{project.pk}/items/import/", {"file": _upload(_items_file(5))})

    assert response.status_code == 202
    job_url = response.json()["url"]
    job = lead_client.get(job_url).json()
    assert job["status"] == "done"
    assert job["kind"] == "import_items"
    assert job["progress_done"] == job["progress_total"] == 5
    assert job["result"]["created"] == 5
    assert Item.objects.filter(project=project, external_id__startswith="new-").count() == 5


def test_bad_item_rows_fail_the_job_with_errors_by_line(
    project, lead_client, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    text = _items_file(2) + "{broken\n" + json.dumps({"id": "x", "prompt": "p", "responses": ["only one"]}) + "\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(f"/api/projects/{project.pk}/items/import/", {"file": _upload(text)})

    job = lead_client.get(f"/api/jobs/{response.json()['job']}/").json()
    assert job["status"] == "failed"
    assert [e["line"] for e in job["errors"]] == [3, 4]
    assert all(e["message"] for e in job["errors"])
    assert not Item.objects.filter(external_id__startswith="new-").exists()


def test_label_import_job_through_the_api(project, lead_client, django_capture_on_commit_callbacks, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    item = project.items.order_by("id").first()
    row = {
        "item": item.external_id,
        "annotator": "old-lab-annotator",
        "mode": "ifs",
        "values": [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.1, "nu": 0.7}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(
            f"/api/projects/{project.pk}/labels/import/", {"file": _upload(json.dumps(row) + "\n")}
        )

    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"])
    assert job.status == Job.Status.DONE
    assert job.result["created"] == 1
    assert Annotation.objects.filter(item=item, annotator__imported_identity__external_id="old-lab-annotator").exists()


def test_upload_without_a_file_names_the_field(project, lead_client):
    response = lead_client.post(f"/api/projects/{project.pk}/items/import/", {"on_duplicate": "sometimes"})

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"file", "on_duplicate"}
