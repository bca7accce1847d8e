"""Background work of the projects app. Tasks take ids, fetch, and call a service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from projects.models import Job
from projects.suggestions import suggestions_generate

logger = logging.getLogger(__name__)


def _recompute_suggestion_figures(project_id: int) -> None:
    # New suggestions change every human-vs-LLM comparison of their items.
    from aggregation.handoff import handoff_evaluate
    from aggregation.suggestion_figures import suggestion_figures_recompute

    suggestion_figures_recompute(project_id=project_id)
    handoff_evaluate(project_id=project_id)


@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3660)
def generate_suggestions(job_id: int) -> None:
    """Run a suggestion Job. Safe to run twice: a finished job is left alone and items that already have an ok
    suggestion are skipped (unless the job asked to overwrite), so a redelivered task only does what is left."""
    job = Job.objects.select_related("project").filter(pk=job_id, kind=Job.Kind.SUGGEST).first()
    if job is None or job.status == Job.Status.DONE:
        return
    options = job.options or {}
    try:
        counts = suggestions_generate(
            project=job.project,
            item_ids=options.get("item_ids"),
            job=job,
            overwrite=bool(options.get("overwrite")) and job.started_at is None,
        )
    except SoftTimeLimitExceeded:
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED,
            finished_at=timezone.now(),
            errors=[{"message": "Stopped by the time limit; run it again to finish the remaining items."}],
        )
        raise
    except Exception as exc:
        logger.exception("Suggestion job %s failed", job_id)
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED, finished_at=timezone.now(), errors=[{"message": str(exc)}]
        )
        raise
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE, finished_at=timezone.now(), result=counts)
    _recompute_suggestion_figures(job.project_id)
