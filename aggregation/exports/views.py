"""The lead's export page: pick a format and filters, start the export job, watch it, download the file.

The job is the API's (aggregation.exports.tasks.export_job_start, the same runner as POST /api/.../export/), and the
download is the API's download endpoint, which accepts the browser's session. Without JavaScript the form posts and
the job page has a refresh link; with htmx the progress fragment polls itself every second until the job ends.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from aggregation.exports.stream import ExportOptions
from aggregation.exports.tasks import export_job_start
from aggregation.forms import ExportForm
from aggregation.selectors import export_job_get, export_jobs_recent
from config.auth import signed_in_user
from projects.job_views import job_page, job_progress
from projects.models import Job
from projects.selectors import project_get_for_lead


def _job_context(job: Job) -> dict[str, Any]:
    return {
        **job_progress(job),
        "filters": {k: v for k, v in job.options.items() if v not in (None, "") and k != "format"},
    }


@login_required
@require_http_methods(["GET", "POST"])
def export_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    form = ExportForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            job = export_job_start(
                project=project, user=signed_in_user(request), options=ExportOptions(**form.options())
            )
        except ValidationError as error:
            for field, field_errors in error.message_dict.items():
                for message in field_errors:
                    form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("export_job", project_id=project.pk, job_id=job.pk)
    context = {"project": project, "form": form, "jobs": export_jobs_recent(project=project)}
    return render(request, "dashboard/export.html", context, status=400 if form.is_bound else 200)


@login_required
@require_GET
def export_job(request: HttpRequest, project_id: int, job_id: int) -> HttpResponse:
    project, job = export_job_get(user=request.user, project_id=project_id, job_id=job_id)
    return job_page(request, "export_job", {"project": project, **_job_context(job)})
