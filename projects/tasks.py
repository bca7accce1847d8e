"""Background work of the projects app. Tasks take ids, fetch, and call a service."""

from __future__ import annotations

from celery import shared_task

from projects import jobs


@shared_task(name="projects.jobs_recover")
def jobs_recover() -> dict[str, int]:
    """Sent by beat: queue jobs lost on the way to a worker or by a worker that died."""
    return jobs.jobs_recover()
