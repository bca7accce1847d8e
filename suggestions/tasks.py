"""Background work of the suggestions app. Tasks take ids, fetch, and call a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from config import events
from projects import jobs
from projects.models import Job
from suggestions.services import suggestions_generate


def suggestion_job_run(*, job_id: int) -> None:
    """Safe to run twice: a finished job is left alone, and items that already have an ok suggestion are skipped
    (only the first attempt overwrites, if asked), so a re-run after a lost worker only does what is left."""
    finished: list[int] = []

    def work(job: Job, progress: jobs.Progress) -> dict[str, Any]:
        options = job.options or {}
        counts = suggestions_generate(
            project=job.project,
            item_ids=options.get("item_ids"),
            progress=progress,
            overwrite=bool(options.get("overwrite")) and job.attempts == 1,
        )
        finished.append(job.project_id)
        return dict(counts)

    jobs.job_run(job_id=job_id, kinds=[Job.Kind.SUGGEST], work=work)
    for project_id in finished:
        events.suggestions_changed(project_id=project_id)


# The name it had in the projects app, so messages queued before the move still find it.
@shared_task(name="projects.tasks.generate_suggestions", acks_late=True, soft_time_limit=3600, time_limit=3660)
def generate_suggestions(job_id: int) -> None:
    suggestion_job_run(job_id=job_id)
