"""The lead's import page: upload a file of items or existing labels, see its format and first rows as Penumbra
reads them, a dry run's per-record errors, then the import with its progress and report.

Every step is the API's: the dry run and the import are the jobs of POST /api/projects/<id>/{items,labels}/import/
(projects.imports.tasks), run by the same job runner. Without JavaScript the form posts a plain file input and the job
page has a Refresh link; with htmx the job fragment polls itself every second until the job ends (as the export
page does), and static/js/import.js adds drag and drop onto the same file input.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.imports.forms import FORMAT_NAMES, ImportForm, LinkForm
from annotation.imports.identities import imported_annotator_link
from config.auth import signed_in_user
from projects.imports.selectors import (
    errors_by_reason,
    identity_get_for_lead,
    import_job_get,
    import_jobs_recent,
    imported_annotators_for_lead,
    linkable_members,
)
from projects.imports.tasks import (
    UploadTooLarge,
    import_job_confirm,
    import_job_start,
    upload_limit_bytes,
    upload_too_large_message,
)
from projects.job_views import job_page, job_progress
from projects.models import Job, Project

PAYLOAD_SLACK = 64 * 1024  # a multipart body carries headers and boundaries besides the file


def _declared_size(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _page(request: HttpRequest, project: Project, form: ImportForm, status: int = 200, **extra: Any) -> HttpResponse:
    _, identities = imported_annotators_for_lead(user=request.user, project_id=project.pk)
    context = {
        "project": project,
        "form": form,
        "jobs": import_jobs_recent(project=project),
        "identities": identities,
        "members": linkable_members(project=project),
        "limit_mb": upload_limit_bytes() // 1024**2,
        "format_names": FORMAT_NAMES,
        **extra,
    }
    return render(request, "dashboard/import.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def import_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project, _ = imported_annotators_for_lead(user=request.user, project_id=project_id)
    if request.method != "POST":
        return _page(request, project, ImportForm())
    if (size := _declared_size(request)) > upload_limit_bytes() + PAYLOAD_SLACK:
        # The body is never read, so there is no bound form to carry the error: the page shows it as a refusal.
        return _page(request, project, ImportForm(), status=413, refusal=upload_too_large_message(size))
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, project, form, status=400)
    try:
        job = import_job_start(
            project=project,
            user=signed_in_user(request),
            kind=form.cleaned_data["kind"],
            upload=form.cleaned_data["file"],
            options=form.job_options(),
        )
    except UploadTooLarge as too_large:
        form.add_error("file", " ".join(too_large.messages))
        return _page(request, project, form, status=413)
    except ValidationError as invalid:
        for field, messages in invalid.message_dict.items():
            for message in messages:
                form.add_error(field if field in form.fields else None, message)
        return _page(request, project, form, status=400)
    return redirect("import_job", project_id=project.pk, job_id=job.pk)


def _job_context(job: Job) -> dict[str, Any]:
    done = job.status == Job.Status.DONE
    result = job.result or {}
    return {
        **job_progress(job),
        "dry_run": bool(job.options.get("dry_run")),
        "result": result,
        "format_name": FORMAT_NAMES.get(result.get("format", ""), result.get("format", "")),
        "labels": job.kind == Job.Kind.IMPORT_LABELS,
        "reasons": errors_by_reason(job.errors),
        "errors_shown": job.errors[:200],
        "can_import": done and bool(job.options.get("dry_run")) and bool(result.get("valid")),
    }


@login_required
@require_GET
def import_job(request: HttpRequest, project_id: int, job_id: int) -> HttpResponse:
    project, job = import_job_get(user=request.user, project_id=project_id, job_id=job_id)
    return job_page(request, "import_job", {"project": project, **_job_context(job)})


@login_required
@require_POST
def import_confirm(request: HttpRequest, project_id: int, job_id: int) -> HttpResponse:
    project, dry_run = import_job_get(user=request.user, project_id=project_id, job_id=job_id)
    try:
        job = import_job_confirm(dry_run=dry_run, user=signed_in_user(request))
    except ValidationError as refused:
        context = {"project": project, **_job_context(dry_run), "refusal": " ".join(refused.messages)}
        return render(request, "dashboard/import_job.html", context, status=400)
    return redirect("import_job", project_id=project.pk, job_id=job.pk)


@login_required
@require_POST
def identity_link(request: HttpRequest, project_id: int, identity_id: int) -> HttpResponse:
    project, identity = identity_get_for_lead(user=request.user, project_id=project_id, identity_id=identity_id)
    form = LinkForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError({"member": "Pick a member."})
        imported_annotator_link(project=project, identity_id=identity.pk, member_id=form.cleaned_data["member"])
    except ValidationError as refused:
        return _page(request, project, ImportForm(), status=400, link_error=(identity.pk, " ".join(refused.messages)))
    return redirect("import_page", project_id=project.pk)
