"""Imports of items and of existing labels as background Jobs with progress a client can poll.

The upload is kept in the database with the Job (projects.jobs), so a worker on any machine can read it. The import
services write the whole file in one transaction, so a worker killed half-way leaves nothing behind and the job,
re-run by projects.jobs.jobs_recover, never writes a row twice.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import File
from django.db import transaction

from projects.formats import FORMATS, NATIVE, OPTION_NAMES, OptionsInvalid, options_from
from projects.imports.formats import items_import_formatted
from projects.imports.items import DUPLICATE_POLICIES, TRL_CHOSEN_AS, ImportRejected, RowError, items_import
from projects.jobs import (
    JobFailed,
    Progress,
    job_enqueue_on_commit,
    job_input_file,
    job_input_lines,
    job_input_scan,
    job_input_store,
    job_run,
)
from projects.models import Job, Project

logger = logging.getLogger(__name__)

IMPORT_KINDS = (Job.Kind.IMPORT_ITEMS, Job.Kind.IMPORT_LABELS)
MAX_UPLOAD_BYTES = 2 * 1024**3


def check_import_job(*, kind: str, upload: File, options: dict[str, Any]) -> None:
    errors: dict[str, str] = {}
    if kind not in IMPORT_KINDS:
        errors["kind"] = f"Expected one of {', '.join(IMPORT_KINDS)}."
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        errors["file"] = f"The file is larger than {MAX_UPLOAD_BYTES // 1024**2} MB."
    elif not upload.size:
        errors["file"] = "The file is empty."
    if kind == Job.Kind.IMPORT_ITEMS:
        if options.get("on_duplicate", "reject") not in DUPLICATE_POLICIES:
            errors["on_duplicate"] = f"Expected one of {', '.join(DUPLICATE_POLICIES)}."
        if options.get("trl_chosen_as", "gold") not in TRL_CHOSEN_AS:
            errors["trl_chosen_as"] = f"Expected one of {', '.join(TRL_CHOSEN_AS)}."
    if options.get("format", NATIVE) not in FORMATS:
        errors["format"] = f"Expected one of {', '.join(FORMATS)}."
    if not isinstance(options.get("skip_invalid", False), bool):
        errors["skip_invalid"] = "Expected true or false."
    try:
        options_from(options)
    except OptionsInvalid as exc:
        errors.update(exc.errors)
    if errors:
        raise ValidationError(errors)


def _user_id(user: AbstractBaseUser | None) -> int | None:
    return None if user is None else int(user.pk)


@transaction.atomic
def import_job_start(
    *, project: Project, user: AbstractBaseUser | None, kind: str, upload: File, options: dict[str, Any]
) -> Job:
    """Keep the upload with a new job and queue its import after commit; the caller answers 202 with the job."""
    check_import_job(kind=kind, upload=upload, options=options)
    job = Job.objects.create(project=project, kind=kind, created_by_id=_user_id(user), options=options)
    job_input_store(job=job, upload=upload)
    job_enqueue_on_commit(job)
    return job


def reading_options(job: Job) -> dict[str, Any]:
    """The options for reading another tool's file, as the lead gave them (projects.formats.Options)."""
    return {name: job.options[name] for name in OPTION_NAMES if name in job.options}


def row_errors(errors: list[RowError]) -> list[dict[str, Any]]:
    return [{"line": e.line, "message": e.message} for e in errors]


def rejected_failure(rejected: ImportRejected) -> JobFailed:
    return JobFailed(
        "Bad rows: nothing was imported.", errors=row_errors(rejected.errors), total_errors=len(rejected.errors)
    )


def job_lines(job: Job) -> Any:
    pause = settings.JOB_TEST_PAUSE_MS / 1000
    if not pause:
        return job_input_lines(job_id=job.pk)

    # Only fault tests set this: it makes an import slow enough to kill its worker half-way.
    def slowly() -> Any:
        for number, line in enumerate(job_input_lines(job_id=job.pk), start=1):
            if number % 100 == 0:
                time.sleep(pause)
            yield line

    return slowly()


def checked_line_count(job: Job) -> int:
    """The file's line count; a line that is not UTF-8 fails the job with its number before anything is read."""
    total, bad = job_input_scan(job_id=job.pk)
    if bad:
        errors = [{"line": line, "message": "not valid UTF-8 text"} for line in bad]
        raise JobFailed("Bad rows: nothing was imported.", errors=errors, total_errors=len(bad))
    return total


def import_items_job_run(*, job_id: int) -> None:
    def work(job: Job, progress: Progress) -> dict[str, Any]:
        fmt = job.options.get("format", NATIVE)
        common = {
            "on_duplicate": job.options.get("on_duplicate", "reject"),
            "skip_invalid": bool(job.options.get("skip_invalid", False)),
            "trl_chosen_as": job.options.get("trl_chosen_as", "gold"),
        }
        try:
            if fmt != NATIVE:
                # Another tool's file (often one JSON array) is converted whole, so it is read whole.
                progress(0, 0)
                converted = items_import_formatted(
                    project=job.project,
                    fmt=fmt,
                    handle=job_input_file(job_id=job.pk),
                    progress=progress,
                    reading=reading_options(job),
                    **common,
                )
                return converted.as_dict()
            total = checked_line_count(job)
            progress(0, total)
            result = items_import(
                project=job.project, lines=job_lines(job), progress=progress, total_lines=total, **common
            )
        except ImportRejected as rejected:
            raise rejected_failure(rejected) from None
        return result.as_dict()

    job_run(job_id=job_id, kinds=[Job.Kind.IMPORT_ITEMS], work=work)


# Named as when it lived in projects.import_tasks, so messages queued before a deploy still find it.
@shared_task(name="projects.import_tasks.import_items_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_items_run(job_id: int) -> None:
    import_items_job_run(job_id=job_id)
