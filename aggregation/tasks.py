"""Celery tasks of the aggregation engine: they take ids, call a service, and are safe to run twice.

Every task acknowledges late (a worker that dies mid-task leaves the message for another), has soft and hard time
limits, and retries with backoff when the database is briefly unavailable. Results are upserts keyed by ids, so a
duplicate or redelivered message only rewrites the same rows.
"""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from aggregation import dirty, services
from projects.models import Project

logger = logging.getLogger(__name__)

ITEM_TIME_LIMIT = 120
PROJECT_TIME_LIMIT = 1800
RECONCILE_TIME_LIMIT = 600
#: Items per task when reconciliation sends stale items back through the queue.
RECONCILE_CHUNK = 2000


@shared_task(
    name="aggregation.item_aggregates",
    soft_time_limit=ITEM_TIME_LIMIT,
    time_limit=ITEM_TIME_LIMIT + 30,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def item_aggregates(project_id: int, item_ids: list[int]) -> int:
    """Recompute the aggregates of these items; returns how many items got one."""
    if not Project.objects.filter(pk=project_id).exists():
        return 0
    return services.item_aggregates_recompute(project_id=project_id, item_ids=item_ids)


@shared_task(
    name="aggregation.items_dirty_recompute",
    soft_time_limit=ITEM_TIME_LIMIT,
    time_limit=ITEM_TIME_LIMIT + 30,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def items_dirty_recompute(project_id: int) -> int:
    """Recompute every item of the project marked dirty since the last run (aggregation.dirty); returns how many."""
    item_ids = dirty.items_dirty_take(project_id=project_id)
    if not item_ids or not Project.objects.filter(pk=project_id).exists():
        return 0
    try:
        done = 0
        for start in range(0, len(item_ids), RECONCILE_CHUNK):
            done += services.item_aggregates_recompute(
                project_id=project_id, item_ids=item_ids[start : start + RECONCILE_CHUNK]
            )
        return done
    except BaseException:
        dirty.items_dirty_restore(project_id=project_id, item_ids=item_ids)
        raise


@shared_task(
    name="aggregation.project_recompute",
    soft_time_limit=PROJECT_TIME_LIMIT,
    time_limit=PROJECT_TIME_LIMIT + 60,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def project_recompute(project_id: int) -> dict[str, object]:
    """Weights, then item aggregates if the weights moved, then agreement, plots, progress, suggestion figures and
    the handoff evaluation (see services.project_aggregates_recompute)."""
    dirty.project_recompute_pending_clear(project_id=project_id)
    if not Project.objects.filter(pk=project_id).exists():
        return {}
    # CPU seconds, not the clock: the pace keeps project runs to a share of the worker's CPU, and a run slowed by a
    # busy machine or a lock wait costs no more of it.
    started = time.process_time()
    done = services.project_aggregates_recompute_exclusive(project_id=project_id)
    if done is not None:
        dirty.project_seconds_record(project_id=project_id, seconds=time.process_time() - started)
    if done is None:
        # Another worker is recomputing this project and may have read it before the save that sent this task:
        # schedule one more run (merged with any other pending one) instead of running beside it.
        try:
            _project_recompute_again(project_id=project_id)
        except Exception:
            logger.warning("Project %s busy and the broker unreachable; reconciliation will run it", project_id)
        return {"busy": True}
    return done


def _project_recompute_again(*, project_id: int) -> None:
    """One more debounced run after a busy one, merged with any pending run as dispatch merges them (the tasks do
    not import dispatch: it imports them)."""
    delay = int(getattr(settings, "AGGREGATION_PROJECT_DELAY", 1))
    client = dirty.redis_client()
    if client is None or dirty.project_pending_raise(
        client=client, project_id=project_id, expiry=delay + int(PROJECT_TIME_LIMIT) + 60
    ):
        project_recompute.apply_async((project_id,), countdown=delay)


@shared_task(
    name="aggregation.aggregates_reconcile",
    soft_time_limit=RECONCILE_TIME_LIMIT,
    time_limit=RECONCILE_TIME_LIMIT + 30,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def aggregates_reconcile() -> dict[str, int]:
    """Periodic (beat): send stale items and projects back through the queue, so nothing is lost when Redis or
    a worker was down. Stale = an annotation newer than the aggregate, or annotations without an aggregate."""
    stale_items = services.stale_items_list()
    n_items = 0
    for project_id, item_ids in stale_items.items():
        for start in range(0, len(item_ids), RECONCILE_CHUNK):
            item_aggregates.delay(project_id, item_ids[start : start + RECONCILE_CHUNK])
        n_items += len(item_ids)
    # Straight to the queue, not through the debounce flag: a flag left by a lost message must not block this.
    stale_projects = set(services.stale_projects_list()) | set(stale_items)
    for project_id in sorted(stale_projects):
        project_recompute.delay(project_id)
    if n_items or stale_projects:
        logger.info("Reconciliation: %s stale items, %s stale projects", n_items, len(stale_projects))
    return {"items": n_items, "projects": len(stale_projects)}
