"""The one door from writes elsewhere to background recomputation: scheduling. Call inside the writing transaction.

After the transaction commits, the changed items are recomputed COALESCED: their ids join a Redis set per project
(``aggregation.dirty``) and one ``items_dirty_recompute`` task is sent only when none is pending, so however fast
annotators save, a project has at most one item task queued and each run recomputes every item gathered since the
last. The project-level figures are scheduled DEBOUNCED: a pending flag (SET NX with an expiry) marks a pending
``project_recompute`` task, sent with a countdown of ``AGGREGATION_PROJECT_DELAY`` seconds (longer when the last run
was long: ``project_delay``) only when none is pending, so a burst of saves costs one project run. A save's whole
Redis side is one round trip. The task lowers the flag when it starts, so a save that lands
during a run schedules the next one.

A settings change (``on_settings_changed``: the operator, weight coefficients, tie tolerance, criterion weights,
handoff rule …, see projects.services.FIGURE_SETTINGS) has no items of its own: it sends ``project_recompute`` at once,
not debounced and not behind a pending flag, because a pending run may have read the old settings already. The
project run notices item aggregates computed with an older ``Project.settings_version`` and recomputes them all,
so the same task serves both events, and reconciliation finds settings-stale aggregates too.

Nothing here may make a save fail: broker or Redis errors are logged and the periodic ``aggregates_reconcile``
task finds the stale aggregates later (the aggregate timestamps are the source of truth, not the queue).

Three ways of running, chosen from the settings:
- A real broker (REDIS_URL): tasks go to Celery workers as above.
- Embedded (no DATABASE_URL, no REDIS_URL: SQLite and eager Celery): the thread of ``aggregation.embedded`` runs
  the work in the web process.
- Eager without the thread (``AGGREGATION_IN_THREAD = False``, as in the test suite): the tasks run in-process
  right after the commit, once per call.

This module sends the tasks; the tasks use ``aggregation.dirty`` and never import this one (a contract in
pyproject.toml keeps it so).
"""

from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.db import transaction

from aggregation import dirty, embedded, tasks

logger = logging.getLogger(__name__)

# Project runs take at most this share of a worker's CPU: the next waits at least (1 / share - 1) × the last run's
# CPU seconds.
PROJECT_RUN_SHARE = 0.2
# However long the last run, a save's figures are at most this many seconds (plus a run) from being counted.
PROJECT_DELAY_LONGEST = 60


def on_annotations_changed(*, project_id: int, item_ids: list[int]) -> None:
    """Schedule recomputation of these items and (debounced) of the project, after the transaction commits."""
    ids = sorted({int(i) for i in item_ids})
    transaction.on_commit(partial(_after_commit, int(project_id), ids))


def on_settings_changed(*, project_id: int) -> None:
    """Schedule a recomputation of the whole project (items, weights, figures, handoff), after the commit."""
    transaction.on_commit(partial(_after_settings_commit, int(project_id)))


def _after_settings_commit(project_id: int) -> None:
    if getattr(settings, "AGGREGATION_IN_THREAD", False):
        embedded.runner.submit(project_id, [])
        return
    try:
        tasks.project_recompute.delay(project_id)
    except Exception:
        logger.exception("Could not run or enqueue the settings recomputation of %s; reconciliation will", project_id)


def _after_commit(project_id: int, item_ids: list[int]) -> None:
    if getattr(settings, "AGGREGATION_IN_THREAD", False):
        embedded.runner.submit(project_id, item_ids)
        return
    try:
        changes_schedule(project_id=project_id, item_ids=item_ids)
    except Exception:
        # Broker down, or (eager mode) the computation itself failed: the save stands, reconciliation catches up.
        logger.exception("Could not run or enqueue the recomputation of project %s; reconciliation will", project_id)


def project_delay(*, last_seconds: float | None) -> float:
    """Seconds the project run waits to gather saves: ``AGGREGATION_PROJECT_DELAY``, or longer when the last run
    took much CPU, so that project runs take at most ``PROJECT_RUN_SHARE`` of a worker's CPU (a 1,000-item project
    is recomputed within a second or two of a save; a 100,000-item one, whose run takes seconds, less often)."""
    shortest = float(getattr(settings, "AGGREGATION_PROJECT_DELAY", 1))
    if not last_seconds:
        return shortest
    paced = round(last_seconds * (1 / PROJECT_RUN_SHARE - 1), 1)
    return max(shortest, min(paced, PROJECT_DELAY_LONGEST))


def changes_schedule(*, project_id: int, item_ids: list[int]) -> tuple[bool, bool]:
    """Mark the items dirty and schedule the project run, sending each task only when none is pending; returns
    whether the item task and the project task were sent. One Redis round trip (``dirty.changes_mark``).

    Without Redis (eager mode, the memory broker) it sends ``item_aggregates`` for these ids and the project task
    every time. A lost set or message loses nothing: the annotations' timestamps stay newer than their aggregates,
    and the periodic reconciliation recomputes them. Raises on broker errors (the after-commit hook logs them).
    """
    app = dirty.celery_app()
    client = None if app.conf.task_always_eager else dirty.redis_client()
    if client is None:
        if item_ids:
            tasks.item_aggregates.delay(project_id, item_ids)
        if app.conf.task_always_eager:
            tasks.project_recompute.delay(project_id)
        else:
            tasks.project_recompute.apply_async((project_id,), countdown=project_delay(last_seconds=None))
        return bool(item_ids), True
    # The expiries outlive the tasks' hard limits (and the countdown), so a lost message unblocks the next save.
    items_raised, project_raised, last_seconds = dirty.changes_mark(
        client=client,
        project_id=project_id,
        item_ids=item_ids,
        items_expiry=int(tasks.ITEM_TIME_LIMIT) + 90,
        project_expiry=PROJECT_DELAY_LONGEST + int(tasks.PROJECT_TIME_LIMIT) + 60,
    )
    try:
        if items_raised:
            tasks.items_dirty_recompute.delay(project_id)
    except Exception:
        dirty.items_pending_lower(client=client, project_id=project_id)
        if project_raised:
            dirty.project_pending_lower(client=client, project_id=project_id)
        raise
    try:
        if project_raised:
            tasks.project_recompute.apply_async((project_id,), countdown=project_delay(last_seconds=last_seconds))
    except Exception:
        dirty.project_pending_lower(client=client, project_id=project_id)
        raise
    return items_raised, project_raised
