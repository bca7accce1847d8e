"""The label-import job: an uploaded file of existing labels, imported by annotation.label_import in a Job.

It shares the item-import job's plumbing (projects.import_tasks: the upload kept with the Job, the UTF-8 scan, the
error shape) and lives here because it runs annotation's services, which projects may not import.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from annotation.label_formats import labels_import_formatted
from annotation.label_import import labels_import
from projects.formats import NATIVE
from projects.import_tasks import checked_line_count, job_lines, rejected_failure, row_errors
from projects.importing import ImportRejected
from projects.jobs import Progress, job_input_file, job_run
from projects.models import Job


def import_labels_job_run(*, job_id: int) -> None:
    def work(job: Job, progress: Progress) -> dict[str, Any]:
        fmt = job.options.get("format", NATIVE)
        common = {
            "skip_invalid": bool(job.options.get("skip_invalid", False)),
            "allow_members": bool(job.options.get("allow_members", False)),
            "allow_leads": bool(job.options.get("allow_leads", False)),
        }
        try:
            if fmt == NATIVE:
                progress(0, checked_line_count(job))
                result = labels_import(project=job.project, lines=job_lines(job), progress=progress, **common)
            else:
                progress(0, 0)
                result = labels_import_formatted(
                    project=job.project, fmt=fmt, handle=job_input_file(job_id=job.pk), progress=progress, **common
                )
        except ImportRejected as rejected:
            raise rejected_failure(rejected) from None
        return {
            "created": result.created,
            "revisions": result.revisions,
            "unchanged": result.unchanged,
            "revised": result.revised,
            "identities_created": result.identities_created,
            "skipped": result.skipped,
            "errors": row_errors(result.errors),
        }

    job_run(job_id=job_id, kinds=[Job.Kind.IMPORT_LABELS], work=work)


# Named as when it lived in projects.import_tasks, so messages queued before a deploy still find it.
@shared_task(name="projects.import_tasks.import_labels_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def import_labels_run(job_id: int) -> None:
    import_labels_job_run(job_id=job_id)
