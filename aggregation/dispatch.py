"""The one door from writes elsewhere to background recomputation. Call inside the writing transaction.

After the transaction commits, the changed items are recomputed COALESCED: their ids join a Redis set per project
(``penumbra:<queue>:dirty-items:<id>``) and one ``items_dirty_recompute`` task is sent only when none is pending
(flag ``…:items-pending:<id>``, SET NX), so however fast annotators save, a project has at most one item task
queued and each run recomputes every item gathered since the last. The project-level figures are scheduled
DEBOUNCED: a Redis key ``penumbra:<queue>:project-recompute:<id>`` (SET NX with an expiry) marks a pending
``project_recompute`` task, sent with a countdown of ``AGGREGATION_PROJECT_DELAY`` seconds only when none is
pending, so a burst of saves costs one project run. The task deletes the key when it starts, so a save that lands
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
- Embedded (no DATABASE_URL, no REDIS_URL: SQLite and eager Celery): a single daemon thread in the web process
  runs the work, so no request waits for it; being one thread it also serialises the background writes, which
  SQLite needs. Pending work is merged (item ids united, one project run per project per wake-up).
- Eager without the thread (``AGGREGATION_IN_THREAD = False``, as in the test suite): the tasks run in-process
  right after the commit, once per call.
"""

from __future__ import annotations

import logging
import threading
from functools import partial
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from aggregation import services

logger = logging.getLogger(__name__)

# Namespaced by queue, so deployments (and parallel test sessions) sharing one Redis do not debounce each other.
PENDING_KEY = "penumbra:{queue}:project-recompute:{project_id}"
DIRTY_ITEMS_KEY = "penumbra:{queue}:dirty-items:{project_id}"
ITEMS_PENDING_KEY = "penumbra:{queue}:items-pending:{project_id}"
_redis_clients: dict[str, Any] = {}


def on_annotations_changed(*, project_id: int, item_ids: list[int]) -> None:
    """Schedule recomputation of these items and (debounced) of the project, after the transaction commits."""
    ids = sorted({int(i) for i in item_ids})
    transaction.on_commit(partial(_after_commit, int(project_id), ids))


def on_settings_changed(*, project_id: int) -> None:
    """Schedule a recomputation of the whole project (items, weights, figures, handoff), after the commit."""
    transaction.on_commit(partial(_after_settings_commit, int(project_id)))


def _after_settings_commit(project_id: int) -> None:
    if getattr(settings, "AGGREGATION_IN_THREAD", False):
        _embedded_runner.submit(project_id, [])
        return
    from aggregation import tasks

    try:
        tasks.project_recompute.delay(project_id)
    except Exception:
        logger.exception("Could not run or enqueue the settings recomputation of %s; reconciliation will", project_id)


def _after_commit(project_id: int, item_ids: list[int]) -> None:
    if getattr(settings, "AGGREGATION_IN_THREAD", False):
        _embedded_runner.submit(project_id, item_ids)
        return

    try:
        if item_ids:
            items_dirty_mark(project_id=project_id, item_ids=item_ids)
        project_recompute_schedule(project_id=project_id)
    except Exception:
        # Broker down, or (eager mode) the computation itself failed: the save stands, reconciliation catches up.
        logger.exception("Could not run or enqueue the recomputation of project %s; reconciliation will", project_id)


def _celery_app() -> Any:
    from config.celery import app

    return app


def _redis_client() -> Any | None:
    """A Redis client on the broker's server when the broker is Redis; None otherwise (memory, eager)."""
    url = str(_celery_app().conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://")):
        return None
    client = _redis_clients.get(url)
    if client is None:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        _redis_clients[url] = client
    return client


def _pending_key(app: Any, project_id: int) -> str:
    return PENDING_KEY.format(queue=app.conf.task_default_queue, project_id=project_id)


def _key(template: str, project_id: int) -> str:
    return template.format(queue=_celery_app().conf.task_default_queue, project_id=project_id)


def items_dirty_mark(*, project_id: int, item_ids: list[int]) -> bool:
    """Add the items to the project's dirty set and send one ``items_dirty_recompute`` unless one is pending;
    True if a task was sent. Without Redis (eager, memory broker) it sends ``item_aggregates`` for these ids.

    A lost set or message loses nothing: the annotations' timestamps stay newer than their aggregates, and the
    periodic reconciliation recomputes them.
    """
    from aggregation import tasks

    app = _celery_app()
    client = None if app.conf.task_always_eager else _redis_client()
    if client is None:
        tasks.item_aggregates.delay(project_id, item_ids)
        return True
    pending = _key(ITEMS_PENDING_KEY, project_id)
    with client.pipeline(transaction=True) as pipe:
        pipe.sadd(_key(DIRTY_ITEMS_KEY, project_id), *item_ids)
        # The expiry outlives the task's hard limit, so a lost message unblocks the next save by itself.
        pipe.set(pending, "1", nx=True, ex=int(tasks.ITEM_TIME_LIMIT) + 90)
        _, sent = pipe.execute()
    if not sent:
        return False
    try:
        tasks.items_dirty_recompute.delay(project_id)
    except Exception:
        client.delete(pending)
        raise
    return True


def items_dirty_take(*, project_id: int) -> list[int] | None:
    """Called by the task: clear the pending flag, then take (read and empty, atomically) the dirty set.

    The flag goes first so a save landing during the run sends the next task; one landing between the two steps
    is taken now and its extra task finds an empty set. None when there is no Redis.
    """
    client = _redis_client()
    if client is None:
        return None
    client.delete(_key(ITEMS_PENDING_KEY, project_id))
    dirty = _key(DIRTY_ITEMS_KEY, project_id)
    with client.pipeline(transaction=True) as pipe:
        pipe.smembers(dirty)
        pipe.delete(dirty)
        members, _ = pipe.execute()
    return sorted(int(member) for member in members)


def items_dirty_restore(*, project_id: int, item_ids: list[int]) -> None:
    """Put taken ids back after a failed run (the retry, or reconciliation, picks them up)."""
    client = _redis_client()
    if client is not None and item_ids:
        try:
            client.sadd(_key(DIRTY_ITEMS_KEY, project_id), *item_ids)
        except Exception:
            logger.warning("Could not restore dirty items of project %s; reconciliation will find them", project_id)


def project_recompute_schedule(*, project_id: int) -> bool:
    """Send ``project_recompute`` with a countdown unless one is already pending; True if sent.

    Eager mode runs it at once. Raises on broker errors (callers decide; the after-commit hook logs them).
    """
    from aggregation import tasks

    app = _celery_app()
    if app.conf.task_always_eager:
        tasks.project_recompute.delay(project_id)
        return True
    delay = int(getattr(settings, "AGGREGATION_PROJECT_DELAY", 3))
    client = _redis_client()
    key = _pending_key(app, project_id)
    if client is not None:
        # The expiry outlives the countdown and the task's hard limit, so a lost message unblocks itself.
        expiry = delay + int(tasks.PROJECT_TIME_LIMIT) + 60
        if not client.set(key, "1", nx=True, ex=expiry):
            return False
    try:
        tasks.project_recompute.apply_async((project_id,), countdown=delay)
    except Exception:
        if client is not None:
            client.delete(key)
        raise
    return True


def project_recompute_pending_clear(*, project_id: int) -> None:
    """Called by the task as it starts: saves from now on need a run of their own."""
    client = _redis_client()
    if client is None:
        return
    try:
        client.delete(_pending_key(_celery_app(), project_id))
    except Exception:
        logger.warning("Could not clear the pending flag of project %s; it expires by itself", project_id)


class _EmbeddedRunner:
    """One daemon thread that runs item and project recomputation for the embedded (SQLite, no broker) mode.

    There is no beat in this mode, so the thread also reconciles: when it starts (work left stale by a previous
    process, e.g. a management command that exited before its thread finished) and whenever it has been idle for
    ``reconcile_seconds``.
    """

    def __init__(self, *, reconcile_seconds: float | None = 300.0) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._items: dict[int, set[int]] = {}
        self._projects: set[int] = set()
        self._thread: threading.Thread | None = None
        self._reconcile_seconds = reconcile_seconds
        self._stopping = False

    def submit(self, project_id: int, item_ids: list[int]) -> None:
        with self._lock:
            self._items.setdefault(project_id, set()).update(item_ids)
            self._projects.add(project_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="penumbra-aggregation", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        """Let the thread finish what it holds and end (tests; the process's own runner lives as long as it)."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _take(self) -> tuple[dict[int, set[int]], set[int]]:
        with self._lock:
            items, projects = self._items, self._projects
            self._items, self._projects = {}, set()
            self._wake.clear()
        return items, projects

    def _loop(self) -> None:
        reconcile = self._reconcile_seconds is not None
        while not self._stopping:
            if reconcile:
                self._reconcile(services)
            woke = self._wake.wait(self._reconcile_seconds)
            reconcile = not woke and self._reconcile_seconds is not None
            if not woke:
                continue
            items, projects = self._take()
            close_old_connections()
            for project_id, ids in items.items():
                try:
                    if ids:
                        services.item_aggregates_recompute(project_id=project_id, item_ids=sorted(ids))
                except Exception:
                    logger.exception("Item recomputation of project %s failed; reconciliation will retry", project_id)
            for project_id in projects:
                try:
                    services.project_aggregates_recompute(project_id=project_id)
                except Exception:
                    logger.exception("Project recomputation of %s failed; reconciliation will retry", project_id)
            close_old_connections()

    @staticmethod
    def _reconcile(services: Any) -> None:
        try:
            close_old_connections()
            stale_items = services.stale_items_list()
            for project_id, item_ids in stale_items.items():
                for start in range(0, len(item_ids), 5000):
                    services.item_aggregates_recompute(project_id=project_id, item_ids=item_ids[start : start + 5000])
            for project_id in sorted(set(services.stale_projects_list()) | set(stale_items)):
                services.project_aggregates_recompute(project_id=project_id)
        except Exception:
            logger.exception("Embedded reconciliation failed; it runs again when the thread is next idle")
        finally:
            close_old_connections()


_embedded_runner = _EmbeddedRunner()
