"""What every job's page shows, for the lead's import and export pages alike: the job's progress, and the page or,
for the htmx poll that refreshes it every second, only its progress fragment."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from projects.models import Job


def job_progress(job: Job) -> dict[str, Any]:
    total = job.progress_total
    percent = round(100 * job.progress_done / total) if total else (100 if job.status == Job.Status.DONE else 0)
    return {
        "job": job,
        "running": job.status in (Job.Status.PENDING, Job.Status.RUNNING),
        "percent": min(100, percent),
    }


def job_page(request: HttpRequest, name: str, context: dict[str, Any]) -> HttpResponse:
    """``dashboard/<name>.html``, or ``dashboard/partials/<name>.html`` when htmx polls it."""
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, f"dashboard/partials/{name}.html", context)
    return render(request, f"dashboard/{name}.html", context)
