"""Exports written to a file by a worker, for clients that would rather poll a Job than hold a long download open.

The streamed endpoint (GET /api/projects/{id}/export/) and this job share aggregation.export's generators; the job
writes the same lines to the default storage and records the path in ``Job.result["file"]``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from typing import Any

from celery import shared_task
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from aggregation.export import ExportOptions, check_export_options, export_count, export_filename, export_lines
from aggregation.selectors import figures_staleness
from projects.models import Job, Project

logger = logging.getLogger(__name__)

PROGRESS_EVERY_SECONDS = 0.5


def _user_id(user: AbstractBaseUser | None) -> int | None:
    return None if user is None else int(user.pk)


@transaction.atomic
def export_job_start(*, project: Project, user: AbstractBaseUser | None, options: ExportOptions) -> Job:
    check_export_options(options)
    job = Job.objects.create(
        project=project,
        kind=Job.Kind.EXPORT,
        created_by_id=_user_id(user),
        options=dataclasses.asdict(options),
    )
    transaction.on_commit(lambda: export_run.delay(job.pk))
    return job


def export_job_run(*, job_id: int) -> None:
    """Write the export of a pending job to storage; a job already claimed by another delivery is left alone."""
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.PENDING, kind=Job.Kind.EXPORT).update(
        status=Job.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return
    job = Job.objects.select_related("project").get(pk=job_id)
    options = ExportOptions(**job.options)
    Job.objects.filter(pk=job.pk).update(progress_total=export_count(project=job.project, options=options))
    path = f"exports/{job.project_id}/{uuid.uuid4().hex}-{export_filename(project=job.project, options=options)}"
    done = 0
    last = time.monotonic()

    def on_unit() -> None:
        nonlocal done, last
        done += 1
        if time.monotonic() - last >= PROGRESS_EVERY_SECONDS:
            last = time.monotonic()
            Job.objects.filter(pk=job.pk).update(progress_done=done)

    # Read before the lines: the file holds figures at least this old (the download repeats it as a header).
    staleness = figures_staleness(project=job.project)
    result: dict[str, Any] = {}
    try:
        lines = 0
        with default_storage.open(default_storage.save(path, ContentFile(b"")), "wb") as handle:
            for line in export_lines(project=job.project, options=options, on_unit=on_unit):
                handle.write(line.encode())
                lines += 1
        result = {
            "file": path,
            "lines": lines,
            "filename": export_filename(project=job.project, options=options),
            "stale": staleness.stale,
            "stale_reason": staleness.reason,
        }
        status = Job.Status.DONE
    except Exception:
        logger.exception("export job %s failed", job_id)
        result = {"detail": "The export failed unexpectedly."}
        status = Job.Status.FAILED
    Job.objects.filter(pk=job.pk).update(status=status, result=result, progress_done=done, finished_at=timezone.now())


@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3660)
def export_run(job_id: int) -> None:
    export_job_run(job_id=job_id)
