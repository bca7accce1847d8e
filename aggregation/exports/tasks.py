"""Exports written by a worker, for clients that would rather poll a Job than hold a long download open.

The streamed endpoint (GET /api/projects/{id}/export/) and this job share aggregation.exports.stream's generators; the
job
writes the same lines into the database with the Job (projects.jobs), so any web server can serve the download. A
re-run (redelivery, or recovery after a worker died) rewrites the output from the start.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from celery import shared_task
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from aggregation.exports.card import export_card
from aggregation.exports.options import ExportOptions, check_export_options
from aggregation.exports.stream import export_count, export_filename, export_lines
from aggregation.selectors import figures_staleness
from config.replica import replica_lag_seconds, replica_reads
from projects.jobs import Progress, job_enqueue_on_commit, job_output_write, job_run
from projects.models import Job, Project


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
    job_enqueue_on_commit(job)
    return job


def export_job_run(*, job_id: int) -> None:
    def work(job: Job, progress: Progress) -> dict[str, Any]:
        # The export's reads come from the replica when there is one (config/replica.py); its writes (the file's
        # chunks, the progress) go to the primary. The result says how far behind the replica was.
        with replica_reads() as from_replica:
            result = write(job, progress)
            if from_replica:
                result["replica_lag_seconds"] = replica_lag_seconds()
        return result

    def write(job: Job, progress: Progress) -> dict[str, Any]:
        # Stored as JSON: the metadata keys come back as a list.
        options = ExportOptions(**{**job.options, "metadata": tuple(job.options.get("metadata") or ())})
        progress(0, export_count(project=job.project, options=options))
        # Read before the lines: the file holds figures at least this old (the download repeats it as a header).
        staleness = figures_staleness(project=job.project)
        units = 0
        lines = 0

        def on_unit() -> None:
            nonlocal units
            units += 1
            progress(units)

        def counted() -> Any:
            nonlocal lines
            for line in export_lines(project=job.project, options=options, on_unit=on_unit):
                lines += 1
                yield line

        size = job_output_write(job_id=job.pk, pieces=counted())
        return {
            "lines": lines,
            "bytes": size,
            "filename": export_filename(project=job.project, options=options),
            "stale": staleness.stale,
            "stale_reason": staleness.reason,
            "card": export_card(project=job.project, options=options),
        }

    job_run(job_id=job_id, kinds=[Job.Kind.EXPORT], work=work)


# Named as when it lived in aggregation.export_tasks, so messages queued before a deploy still find it.
@shared_task(name="aggregation.export_tasks.export_run", acks_late=True, soft_time_limit=3600, time_limit=3660)
def export_run(job_id: int) -> None:
    export_job_run(job_id=job_id)
