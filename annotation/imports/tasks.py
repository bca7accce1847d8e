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
from projects.formats import NATIVE
from projects.imports.items import ImportRejected
from projects.imports.preview import labels_preview
from projects.imports.tasks import (
    checked_line_count,
    dry_run_outcome,
    file_problems_named,
    formatted_input,
    job_lines,
    reading_options,
    rejected_failure,
    resolved_format,
    row_errors,
)
from projects.jobs import Progress, job_input_file, job_run
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
        with file_problems_named():
            fmt, why = resolved_format(job, labels=True)

            def run() -> dict[str, Any]:
                if fmt == NATIVE:
                    progress(0, checked_line_count(job))
                    return _as_dict(
                        labels_import(project=job.project, lines=job_lines(job), progress=progress, **common)
                    )
                progress(0, 0)
                return _as_dict(
                    labels_import_formatted(
                        project=job.project,
                        fmt=fmt,
                        handle=formatted_input(job, fmt),
                        progress=progress,
                        reading=reading_options(job),
                        **common,
                    )
                )

            def preview() -> list[dict[str, Any]]:
                data = job_input_file(job_id=job.pk).getvalue()
                return labels_preview(project=job.project, fmt=fmt, data=data, reading=reading_options(job))

            try:
                return dry_run_outcome(run, preview=preview, fmt=fmt, why=why, dry=bool(job.options.get("dry_run")))
            except ImportRejected as rejected:
                raise rejected_failure(rejected) from None

    job_run(job_id=job_id, kinds=[Job.Kind.IMPORT_LABELS], work=work)


# Named as when it lived in projects.import_tasks, so messages queued before a deploy still find it.
@shared_task(name="projects.import_tasks.import_labels_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_labels_run(job_id: int) -> None:
    import_labels_job_run(job_id=job_id)
