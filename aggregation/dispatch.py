"""The one door from writes elsewhere to background recomputation: scheduling. Call inside the writing transaction.

After the transaction commits, the changed items are recomputed COALESCED: their ids join a Redis set per project
(``aggregation.dirty``) and one ``items_dirty_recompute`` task is sent only when none is pending, so however fast
annotators save, a project has at most one item task queued and each run recomputes every item gathered since the
last. The project-level figures are scheduled DEBOUNCED: a pending flag (SET NX with an expiry) marks a pending
``project_recompute`` task, sent with a countdown of ``AGGREGATION_PROJECT_DELAY`` seconds only when none is
pending, so a burst of saves costs one project run. The task lowers the flag when it starts, so a save that lands
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
        if item_ids:
            items_dirty_mark(project_id=project_id, item_ids=item_ids)
        project_recompute_schedule(project_id=project_id)
    except Exception:
        # Broker down, or (eager mode) the computation itself failed: the save stands, reconciliation catches up.
        logger.exception("Could not run or enqueue the recomputation of project %s; reconciliation will", project_id)


def items_dirty_mark(*, project_id: int, item_ids: list[int]) -> bool:
    """Add the items to the project's dirty set and send one ``items_dirty_recompute`` unless one is pending;
    True if a task was sent. Without Redis (eager, memory broker) it sends ``item_aggregates`` for these ids.

    A lost set or message loses nothing: the annotations' timestamps stay newer than their aggregates, and the
    periodic reconciliation recomputes them.
    """
    client = None if dirty.celery_app().conf.task_always_eager else dirty.redis_client()
    if client is None:
        tasks.item_aggregates.delay(project_id, item_ids)
        return True
    # The expiry outlives the task's hard limit, so a lost message unblocks the next save by itself.
    expiry = int(tasks.ITEM_TIME_LIMIT) + 90
    if not dirty.items_dirty_add(client=client, project_id=project_id, item_ids=item_ids, expiry=expiry):
        return False
    try:
        tasks.items_dirty_recompute.delay(project_id)
    except Exception:
        dirty.items_pending_lower(client=client, project_id=project_id)
        raise
    return True


def project_recompute_schedule(*, project_id: int) -> bool:
    """Send ``project_recompute`` with a countdown unless one is already pending; True if sent.

    Eager mode runs it at once. Raises on broker errors (callers decide; the after-commit hook logs them).
    """
    if dirty.celery_app().conf.task_always_eager:
        tasks.project_recompute.delay(project_id)
        return True
    delay = int(getattr(settings, "AGGREGATION_PROJECT_DELAY", 3))
    client = dirty.redis_client()
    if client is not None:
        # The expiry outlives the countdown and the task's hard limit, so a lost message unblocks itself.
        expiry = delay + int(tasks.PROJECT_TIME_LIMIT) + 60
        if not dirty.project_pending_raise(client=client, project_id=project_id, expiry=expiry):
            return False
    try:
        tasks.project_recompute.apply_async((project_id,), countdown=delay)
    except Exception:
        if client is not None:
            dirty.project_pending_lower(client=client, project_id=project_id)
        raise
    return True
