"""The lead's import page without a browser: upload → dry run (format, preview, errors by line) → import → report,
the upload limit (413), linking an imported annotator, and 404 for everyone but the project's leads."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation
from projects.models import ImportedAnnotator, Item, Job


def _items(n: int, broken: bool = False) -> bytes:
    rows = [
        json.dumps({"id": f"p{i}", "prompt": f"Prompt {i}", "responses": [{"text": f"A{i}", "model": "gpt-x"}, f"B{i}"],
                    "metadata": {"topic": "t", "gold_reason": "why"}})
        for i in range(n)
    ]  # fmt: skip
    if broken:
        rows.append('{"id": "bad", "prompt": "p", "responses": ["only one"]}')
    return ("\n".join(rows) + "\n").encode()


def _upload(client, project, data: bytes, capture, **fields):
    with capture(execute=True):
        return client.post(
            f"/projects/{project.pk}/import/",
            {"kind": "import_items", "format": "auto", "on_duplicate": "reject", "trl_chosen_as": "gold",
             "file": SimpleUploadedFile("items.jsonl", data), **fields},
        )  # fmt: skip


def test_upload_dry_run_then_import_and_report(project, lead_client, django_capture_on_commit_callbacks):
    page = lead_client.get(f"/projects/{project.pk}/import/")
    assert page.status_code == 200
    assert b'type="file"' in page.content

    response = _upload(lead_client, project, _items(3), django_capture_on_commit_callbacks)
    assert response.status_code == 302
    dry = lead_client.get(response["Location"]).content.decode()
    assert "Penumbra&#x27;s own JSON Lines" in dry or "Penumbra's own JSON Lines" in dry
    assert "Prompt 0" in dry
    assert "gpt-x" in dry
    assert "gold_reason" in dry
    assert not Item.objects.filter(project=project, external_id__startswith="p").exists()

    dry_run = Job.objects.get(project=project, options__dry_run=True)
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = lead_client.post(f"/projects/{project.pk}/import/{dry_run.pk}/run/")
    report = lead_client.get(confirmed["Location"]).content.decode()
    assert 'id="import-counts"' in report
    assert "Report" in report
    assert Item.objects.filter(project=project, external_id__startswith="p").count() == 3


def test_bad_records_are_named_by_line_and_block_the_import(project, lead_client, django_capture_on_commit_callbacks):
    response = _upload(lead_client, project, _items(2, broken=True), django_capture_on_commit_callbacks)

    page = lead_client.get(response["Location"]).content.decode()
    assert "line 3" in page
    assert "responses must be a list of at least 2" in page
    assert 'id="import-confirm"' not in page
    dry_run = Job.objects.get(project=project)
    assert lead_client.post(f"/projects/{project.pk}/import/{dry_run.pk}/run/").status_code == 400


def test_polling_answers_the_fragment(project, lead_client, django_capture_on_commit_callbacks):
    response = _upload(lead_client, project, _items(1), django_capture_on_commit_callbacks)

    fragment = lead_client.get(response["Location"], headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith("{#") or fragment.lstrip().startswith("<section")
    assert "<html" not in fragment


def test_an_upload_over_the_limit_answers_413(project, lead_client, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_MAX_UPLOAD_MB = 1
    response = _upload(lead_client, project, b"x" * (1024**2 + 10), django_capture_on_commit_callbacks)

    assert response.status_code == 413
    assert "up to 1 MB" in response.content.decode()
    assert not Job.objects.exists()


def test_a_lead_links_an_imported_annotator_on_the_page(project, lead_client, annotator):
    from annotation.imports.labels import labels_import

    item = project.items.order_by("id").first()
    row = {"item": item.external_id, "annotator": "ext-9", "mode": "ifs",
           "values": [{"position": 0, "mu": 0.5, "nu": 0.1}, {"position": 1, "mu": 0.1, "nu": 0.5}]}  # fmt: skip
    labels_import(project=project, lines=[json.dumps(row)])
    identity = ImportedAnnotator.objects.get(project=project)
    assert "ext-9" in lead_client.get(f"/projects/{project.pk}/import/").content.decode()

    response = lead_client.post(
        f"/projects/{project.pk}/import/annotators/{identity.pk}/link/", {"member": annotator.pk}
    )

    assert response.status_code == 302
    assert Annotation.objects.get(item=item).annotator == annotator
    assert "linked to annotator" in lead_client.get(f"/projects/{project.pk}/import/").content.decode()


def test_only_leads_reach_the_page(
    project, annotator_client, outsider_client, lead_client, django_capture_on_commit_callbacks
):
    response = _upload(lead_client, project, _items(1), django_capture_on_commit_callbacks)
    for client in (annotator_client, outsider_client):
        assert client.get(f"/projects/{project.pk}/import/").status_code == 404
        assert client.get(response["Location"]).status_code == 404
