"""The lead's export page: the form starts the export job, the job page follows it, the file downloads."""

from __future__ import annotations

import json

from django.urls import reverse

from aggregation.exports.tasks import export_job_run
from projects.models import Job


def _url(project, name="export_page", **kwargs):
    return reverse(name, kwargs={"project_id": project.pk, **kwargs})


def test_form_starts_a_job_with_the_chosen_filters(lead_client, project):
    response = lead_client.post(
        _url(project),
        {"format": "annotations", "min_annotators": "0", "ties": "mark", "provenance": "", "metadata": "topic, source"},
    )
    job = Job.objects.get(project=project, kind=Job.Kind.EXPORT)
    assert response.status_code == 302
    assert response["Location"] == _url(project, "export_job", job_id=job.pk)
    assert job.options["format"] == "annotations"
    assert job.options["min_annotators"] == 0
    assert job.options["ties"] == "mark"
    assert job.options["provenance"] is None
    assert job.options["metadata"] == ["topic", "source"]


def test_running_job_polls_and_done_job_offers_the_download(lead_client, project):
    lead_client.post(_url(project), {"format": "annotations"})
    job = Job.objects.get(project=project, kind=Job.Kind.EXPORT)

    pending = lead_client.get(_url(project, "export_job", job_id=job.pk), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' in pending
    assert "export-download" not in pending

    export_job_run(job_id=job.pk)  # what the worker does with the job
    done = lead_client.get(_url(project, "export_job", job_id=job.pk), HTTP_HX_REQUEST="true").content.decode()
    assert "every 1s" not in done  # polling stops
    download_url = reverse("api-export-download", kwargs={"job_id": job.pk})
    assert download_url in done

    download = lead_client.get(download_url)
    assert download.status_code == 200
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert all(json.loads(line) for line in lines)


def test_bad_filter_is_refused_and_starts_nothing(lead_client, project):
    response = lead_client.post(_url(project), {"format": "dpo", "min_agreement": "1.5"})
    assert response.status_code == 400
    assert "min_agreement" in response.content.decode()
    assert not Job.objects.filter(project=project).exists()


def test_only_leads_see_exports(annotator_client, outsider_client, lead_client, project, other_project):
    lead_client.post(_url(project), {"format": "dpo"})
    job = Job.objects.get(project=project)
    for client in (annotator_client, outsider_client):
        assert client.get(_url(project)).status_code == 404
        assert client.post(_url(project), {"format": "dpo"}).status_code == 404
        assert client.get(_url(project, "export_job", job_id=job.pk)).status_code == 404
    # A job is found only under its own project.
    assert (
        lead_client.get(reverse("export_job", kwargs={"project_id": other_project.pk, "job_id": job.pk})).status_code
        == 404
    )
    assert Job.objects.filter(project=project).count() == 1


def test_dashboard_header_links_to_the_export_page(lead_client, project):
    html = lead_client.get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    assert _url(project) in html


def test_a_bad_metadata_key_is_named_on_the_page_and_starts_nothing(lead_client, project):
    response = lead_client.post(_url(project), {"format": "dpo", "metadata": "topic, not a key"})
    assert response.status_code == 400
    assert "A metadata key is 1 to 64 letters, digits or underscores" in response.content.decode()
    assert not Job.objects.filter(project=project).exists()
