"""Imports of items and of existing labels as background Jobs with progress a client can poll.

The upload is kept in the database with the Job (projects.jobs), so a worker on any machine can read it. The import
services write the whole file in one transaction, so a worker killed half-way leaves nothing behind and the job,
re-run by projects.jobs.jobs_recover, never writes a row twice.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from celery import shared_task
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import File
from django.db import transaction

from config.input_limits import DEPTH_MESSAGE
from projects.formats import FORMATS, NATIVE, OPTION_NAMES, OptionsInvalid, options_from
from projects.imports.formats import items_import_formatted
from projects.imports.items import DUPLICATE_POLICIES, TRL_CHOSEN_AS, ImportRejected, RowError, items_import
from projects.imports.preview import AUTO, FileProblem, check_encoding, is_arrow_error, items_preview, resolve_format
from projects.jobs import (
    JobFailed,
    Progress,
    job_enqueue_on_commit,
    job_input_copy,
    job_input_file,
    job_input_head,
    job_input_lines,
    job_input_scan,
    job_input_store,
    job_run,
)
from projects.models import Job, Project

logger = logging.getLogger(__name__)

IMPORT_KINDS = (Job.Kind.IMPORT_ITEMS, Job.Kind.IMPORT_LABELS)
FORMAT_CHOICES = (AUTO, *FORMATS)
# The lead's choices for another tool's file, passed to the converters (projects.formats) as keywords when given:
# how per-response ratings become a label, and which of a file's annotation schemes to read.


class UploadTooLarge(ValidationError):
    """The upload is over IMPORT_MAX_UPLOAD_MB: the page and the API answer 413."""


def upload_limit_bytes() -> int:
    return int(settings.IMPORT_MAX_UPLOAD_MB) * 1024**2


def upload_too_large_message(size: int) -> str:
    return (
        f"The file is {size / 1024**2:.1f} MB; imports take files up to {settings.IMPORT_MAX_UPLOAD_MB} MB "
        "(IMPORT_MAX_UPLOAD_MB). Split it into parts and import them one after the other."
    )


def check_import_job(*, kind: str, upload: File, options: dict[str, Any]) -> None:
    if upload.size is not None and upload.size > upload_limit_bytes():
        raise UploadTooLarge({"file": upload_too_large_message(upload.size)})
    errors: dict[str, str] = {}
    if kind not in IMPORT_KINDS:
        errors["kind"] = f"Expected one of {', '.join(IMPORT_KINDS)}."
    if not upload.size:
        errors["file"] = "The file is empty."
    if kind == Job.Kind.IMPORT_ITEMS:
        if options.get("on_duplicate", "reject") not in DUPLICATE_POLICIES:
            errors["on_duplicate"] = f"Expected one of {', '.join(DUPLICATE_POLICIES)}."
        if options.get("trl_chosen_as", "gold") not in TRL_CHOSEN_AS:
            errors["trl_chosen_as"] = f"Expected one of {', '.join(TRL_CHOSEN_AS)}."
    if options.get("format", NATIVE) not in FORMAT_CHOICES:
        errors["format"] = f"Expected one of {', '.join(FORMAT_CHOICES)}."
    try:
        options_from(options)
    except OptionsInvalid as exc:
        errors.update(exc.errors)
    for flag in ("skip_invalid", "dry_run"):
        if not isinstance(options.get(flag, False), bool):
            errors[flag] = "Expected true or false."
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


@transaction.atomic
def import_job_confirm(*, dry_run: Job, user: AbstractBaseUser | None) -> Job:
    """The import for real of a dry run's file, with its options (the format it detected, if it detected one)."""
    if not dry_run.options.get("dry_run") or dry_run.status != Job.Status.DONE:
        raise ValidationError({"job": "Only a finished dry run can be imported."})
    if not dry_run.result.get("valid"):
        raise ValidationError({"job": "The dry run found bad records: fix the file, or allow skipping them."})
    options = {**dry_run.options, "dry_run": False, "format": dry_run.result.get("format", NATIVE)}
    job = Job.objects.create(
        project_id=dry_run.project_id, kind=dry_run.kind, created_by_id=_user_id(user), options=options
    )
    job_input_copy(source_id=dry_run.pk, job=job)
    job_enqueue_on_commit(job)
    return job


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
    """The file's line count; a line that is not UTF-8 fails the job, naming it and its byte, before any is read."""
    total, bad = job_input_scan(job_id=job.pk)
    if bad:
        errors = [
            {
                "line": line,
                "message": f"not UTF-8 text: byte 0x{byte:02x} at byte offset {offset} of the file is not valid "
                "UTF-8 (Penumbra expects UTF-8; save or export the file as UTF-8)",
            }
            for line, offset, byte in bad
        ]
        raise JobFailed(
            f"The file is not UTF-8 text (first at line {bad[0][0]}, byte offset {bad[0][1]}): nothing was imported.",
            errors=errors,
            total_errors=len(bad),
        )
    return total


def resolved_format(job: Job, *, labels: bool) -> tuple[str, str]:
    return resolve_format(job.options.get("format", NATIVE), job_input_head(job_id=job.pk), labels=labels)


def file_failure(problem: FileProblem) -> JobFailed:
    errors = [{"line": problem.line, "message": str(problem)}] if problem.line else []
    return JobFailed(str(problem), errors=errors, total_errors=len(errors))


@contextmanager
def file_problems_named() -> Iterator[None]:
    """Errors that mean the file as a whole is broken become a JobFailed that says so (never "failed unexpectedly")."""
    try:
        yield
    except FileProblem as problem:
        raise file_failure(problem) from None
    except RecursionError:
        raise JobFailed(f"The file is nested too deeply to read: {DEPTH_MESSAGE}") from None
    except TypeError as exc:
        if "unexpected keyword argument" not in str(exc):
            raise
        raise JobFailed(f"This format's converter does not take that option ({exc}).") from None
    except Exception as exc:
        if is_arrow_error(exc):
            # Only the Parquet reader raises these: a truncated or corrupt file, or not Parquet at all.
            raise JobFailed(f"The file is not a valid Parquet file: {exc}") from None
        raise


def formatted_input(job: Job, fmt: str) -> io.BytesIO:
    """The whole file for a converter, checked to be UTF-8 first (Parquet is binary and checked by its reader)."""
    handle = job_input_file(job_id=job.pk)
    check_encoding(handle.getvalue())
    return handle


def dry_run_outcome(
    run: Callable[[], dict[str, Any]], *, preview: Callable[[], list[dict[str, Any]]], fmt: str, why: str, dry: bool
) -> dict[str, Any]:
    """Run the import; for a dry run inside a savepoint that is always rolled back, so nothing stays written (nor
    any after-commit event sent), and with bad rows reported as the dry run's answer instead of a failure."""
    if not dry:
        return {**run(), "format": fmt, "format_reason": why}
    outcome: dict[str, Any] = {"dry_run": True, "format": fmt, "format_reason": why, "preview": preview()}
    try:
        with transaction.atomic():
            outcome.update(run(), valid=True)
            transaction.set_rollback(True)
    except ImportRejected as rejected:
        outcome.update(valid=False, invalid=len(rejected.errors), errors=row_errors(rejected.errors))
    return outcome


class ImportPreview(Protocol):
    def __call__(
        self, *, project: Project, fmt: str, data: bytes, reading: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]: ...


def import_job_outcome(
    job: Job,
    progress: Progress,
    *,
    labels: bool,
    native: Callable[[Any, int], dict[str, Any]],
    formatted: Callable[[str, io.BytesIO, dict[str, Any]], dict[str, Any]],
    preview: ImportPreview,
) -> dict[str, Any]:
    """An import job's work for items or labels: the format found, the file checked, then ``native`` (given the
    file's lines and their count) or ``formatted`` (given the format, the whole file and the lead's reading
    options), for real or as a dry run with ``preview`` of the first records."""
    with file_problems_named():
        fmt, why = resolved_format(job, labels=labels)

        def run() -> dict[str, Any]:
            if fmt != NATIVE:
                # Another tool's file (often one JSON array) is converted whole, so it is read whole.
                progress(0, 0)
                return formatted(fmt, formatted_input(job, fmt), reading_options(job))
            total = checked_line_count(job)
            progress(0, total)
            return native(job_lines(job), total)

        def preview_rows() -> list[dict[str, Any]]:
            data = job_input_file(job_id=job.pk).getvalue()
            return preview(project=job.project, fmt=fmt, data=data, reading=reading_options(job))

        try:
            return dry_run_outcome(run, preview=preview_rows, fmt=fmt, why=why, dry=bool(job.options.get("dry_run")))
        except ImportRejected as rejected:
            raise rejected_failure(rejected) from None


def import_items_job_run(*, job_id: int) -> None:
    def work(job: Job, progress: Progress) -> dict[str, Any]:
        common = {
            "on_duplicate": job.options.get("on_duplicate", "reject"),
            "skip_invalid": bool(job.options.get("skip_invalid", False)),
            "trl_chosen_as": job.options.get("trl_chosen_as", "gold"),
        }
        return import_job_outcome(
            job,
            progress,
            labels=False,
            native=lambda lines, total: items_import(
                project=job.project, lines=lines, progress=progress, total_lines=total, **common
            ).as_dict(),
            formatted=lambda fmt, handle, reading: items_import_formatted(
                project=job.project, fmt=fmt, handle=handle, progress=progress, reading=reading, **common
            ).as_dict(),
            preview=items_preview,
        )

    job_run(job_id=job_id, kinds=[Job.Kind.IMPORT_ITEMS], work=work)


# Named as when it lived in projects.import_tasks, so messages queued before a deploy still find it.
@shared_task(name="projects.import_tasks.import_items_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_items_run(job_id: int) -> None:
    import_items_job_run(job_id=job_id)
