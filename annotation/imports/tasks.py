"""The label-import job: an uploaded file of existing labels, imported by annotation.imports.labels in a Job.

It shares the item-import job's plumbing (projects.imports.tasks: the upload kept with the Job, the format detected,
the UTF-8 scan, broken files named, the dry run, the error shape) and lives here because it runs annotation's
services, which projects may not import.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from annotation.imports.formats import labels_import_formatted
from annotation.imports.labels import LabelImportResult, labels_import
from projects.imports.preview import labels_preview
from projects.imports.tasks import import_job_outcome, row_errors
from projects.jobs import Progress, job_run
from projects.models import Job


def _as_dict(result: LabelImportResult) -> dict[str, Any]:
    return {
        "created": result.created,
        "revisions": result.revisions,
        "unchanged": result.unchanged,
        "revised": result.revised,
        "identities_created": result.identities_created,
        "skipped": result.skipped,
        "errors": row_errors(result.errors),
        **({"notes": result.notes} if result.notes else {}),
    }


def import_labels_job_run(*, job_id: int) -> None:
    def work(job: Job, progress: Progress) -> dict[str, Any]:
        common: dict[str, Any] = {
            "skip_invalid": bool(job.options.get("skip_invalid", False)),
            "allow_members": bool(job.options.get("allow_members", False)),
            "allow_leads": bool(job.options.get("allow_leads", False)),
        }
        return import_job_outcome(
            job,
            progress,
            labels=True,
            native=lambda lines, _total: _as_dict(
                labels_import(project=job.project, lines=lines, progress=progress, **common)
            ),
            formatted=lambda fmt, handle, reading: _as_dict(
                labels_import_formatted(
                    project=job.project, fmt=fmt, handle=handle, progress=progress, reading=reading, **common
                )
            ),
            preview=labels_preview,
        )

    job_run(job_id=job_id, kinds=[Job.Kind.IMPORT_LABELS], work=work)


# Named as when it lived in projects.import_tasks, so messages queued before a deploy still find it.
@shared_task(name="projects.import_tasks.import_labels_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_labels_run(job_id: int) -> None:
    import_labels_job_run(job_id=job_id)
