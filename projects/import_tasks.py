"""Imports of items and of existing labels as background Jobs with progress a client can poll.

The uploaded file is kept in the default storage (MEDIA_ROOT; shared storage when workers run on other machines) and
the Job row names it. The task only fetches the job by id and calls the import service; a job that is already done
or failed is left alone, so a redelivered task is harmless.

Progress is written through a second database connection: the import services run in one transaction (whole file or
nothing), and a progress update made inside it would stay invisible to pollers until the end. SQLite allows one
writer at a time, so there the job shows its progress only when it ends.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from celery import shared_task
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import File
from django.core.files.storage import default_storage
from django.db import connection, connections, transaction
from django.utils import timezone

from annotation.label_formats import labels_import_formatted
from annotation.label_import import labels_import
from projects.format_import import items_import_formatted
from projects.formats import FORMATS, NATIVE
from projects.importing import DUPLICATE_POLICIES, TRL_CHOSEN_AS, ImportRejected, RowError, items_import
from projects.models import Job, Project

logger = logging.getLogger(__name__)

IMPORT_KINDS = (Job.Kind.IMPORT_ITEMS, Job.Kind.IMPORT_LABELS)
PROGRESS_EVERY_SECONDS = 0.5
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
    if errors:
        raise ValidationError(errors)


def _user_id(user: AbstractBaseUser | None) -> int | None:
    return None if user is None else int(user.pk)


@transaction.atomic
def import_job_start(
    *, project: Project, user: AbstractBaseUser | None, kind: str, upload: File, options: dict[str, Any]
) -> Job:
    """Keep the upload and queue its import after commit; the caller answers 202 with the job."""
    check_import_job(kind=kind, upload=upload, options=options)
    path = default_storage.save(f"imports/{project.pk}/{uuid.uuid4().hex}.jsonl", upload)
    job = Job.objects.create(project=project, kind=kind, created_by_id=_user_id(user), options=options, input_file=path)
    task = import_items_run if kind == Job.Kind.IMPORT_ITEMS else import_labels_run
    transaction.on_commit(lambda: task.delay(job.pk))
    return job


def _lines(path: str) -> Iterator[str]:
    with default_storage.open(path, "rb") as handle:
        for raw in handle:
            yield raw.decode("utf-8", errors="replace")


def _count_lines(path: str) -> int:
    with default_storage.open(path, "rb") as handle:
        return sum(1 for _ in handle)


class _ProgressWriter:
    """Writes progress_done (throttled) on its own connection, visible while the import's transaction is open."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last = 0.0
        self.side = connections.create_connection("default") if connection.vendor == "postgresql" else None

    def __call__(self, done: int, total: int | None = None) -> None:
        now = time.monotonic()
        if self.side is None or now - self.last < PROGRESS_EVERY_SECONDS:
            return
        self.last = now
        try:
            with self.side.cursor() as cursor:
                cursor.execute(f"UPDATE {Job._meta.db_table} SET progress_done = %s WHERE id = %s", [done, self.job_id])
        except Exception:  # progress is a courtesy: never let it fail an import
            logger.warning("could not record progress of job %s", self.job_id, exc_info=True)

    def close(self) -> None:
        if self.side is not None:
            self.side.close()


def _row_errors(errors: list[RowError]) -> list[dict[str, Any]]:
    return [{"line": e.line, "message": e.message} for e in errors]


def _job_begin(job_id: int) -> Job | None:
    """Claim a pending job; None if it is gone or another delivery already ran it."""
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.PENDING).update(
        status=Job.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return None
    job = Job.objects.select_related("project").get(pk=job_id)
    job.progress_total = _count_lines(job.input_file)
    job.save(update_fields=["progress_total"])
    return job


def _job_end(job: Job, *, status: str, result: dict[str, Any], errors: list[dict[str, Any]]) -> None:
    job.status = status
    job.result = result
    job.errors = errors
    job.finished_at = timezone.now()
    if status == Job.Status.DONE:
        job.progress_done = job.progress_total or 0
    job.save(update_fields=["status", "result", "errors", "finished_at", "progress_done"])


def _run(job_id: int, run_import: Callable[[Job, _ProgressWriter], dict[str, Any]]) -> None:
    job = _job_begin(job_id)
    if job is None:
        return
    progress = _ProgressWriter(job.pk)
    try:
        result = run_import(job, progress)
    except ImportRejected as rejected:
        _job_end(
            job,
            status=Job.Status.FAILED,
            result={"detail": "Bad rows: nothing was imported.", "total_errors": len(rejected.errors)},
            errors=_row_errors(rejected.errors),
        )
    except ValidationError as invalid:
        _job_end(job, status=Job.Status.FAILED, result={"detail": " ".join(invalid.messages)}, errors=[])
    except Exception:
        logger.exception("import job %s failed", job_id)
        _job_end(job, status=Job.Status.FAILED, result={"detail": "The import failed unexpectedly."}, errors=[])
        raise
    else:
        _job_end(job, status=Job.Status.DONE, result=result, errors=result.pop("errors", []))
    finally:
        progress.close()


def import_items_job_run(*, job_id: int) -> None:
    def run_import(job: Job, progress: _ProgressWriter) -> dict[str, Any]:
        fmt = job.options.get("format", NATIVE)
        if fmt != NATIVE:
            with default_storage.open(job.input_file, "rb") as handle:
                converted = items_import_formatted(
                    project=job.project,
                    fmt=fmt,
                    handle=handle,
                    on_duplicate=job.options.get("on_duplicate", "reject"),
                    skip_invalid=bool(job.options.get("skip_invalid", False)),
                    trl_chosen_as=job.options.get("trl_chosen_as", "gold"),
                    progress=progress,
                )
            return converted.as_dict()
        result = items_import(
            project=job.project,
            lines=_lines(job.input_file),
            on_duplicate=job.options.get("on_duplicate", "reject"),
            skip_invalid=bool(job.options.get("skip_invalid", False)),
            trl_chosen_as=job.options.get("trl_chosen_as", "gold"),
            progress=progress,
            total_lines=job.progress_total,
        )
        return result.as_dict()

    _run(job_id, run_import)


def import_labels_job_run(*, job_id: int) -> None:
    def run_import(job: Job, progress: _ProgressWriter) -> dict[str, Any]:
        fmt = job.options.get("format", NATIVE)
        skip_invalid = bool(job.options.get("skip_invalid", False))
        accounts = {
            "allow_members": bool(job.options.get("allow_members", False)),
            "allow_leads": bool(job.options.get("allow_leads", False)),
        }
        if fmt == NATIVE:
            result = labels_import(
                project=job.project,
                lines=_lines(job.input_file),
                skip_invalid=skip_invalid,
                progress=progress,
                **accounts,
            )
        else:
            with default_storage.open(job.input_file, "rb") as handle:
                result = labels_import_formatted(
                    project=job.project,
                    fmt=fmt,
                    handle=handle,
                    skip_invalid=skip_invalid,
                    progress=progress,
                    **accounts,
                )
        return {
            "created": result.created,
            "revisions": result.revisions,
            "skipped": result.skipped,
            "errors": _row_errors(result.errors),
        }

    _run(job_id, run_import)


@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_items_run(job_id: int) -> None:
    import_items_job_run(job_id=job_id)


@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_labels_run(job_id: int) -> None:
    import_labels_job_run(job_id=job_id)
