"""The embedded runner: background recomputation without a broker (the SQLite default, eager Celery).

One daemon thread in the web process runs the work a commit schedules (``aggregation.dispatch`` submits it), so no
request waits for it; being one thread it also serialises the background writes, which SQLite needs. Pending work is
merged (item ids united, one project run per project per wake-up). There is no beat in this mode, so the thread also
reconciles: when it starts (work left stale by a previous process, e.g. a management command that exited before its
thread finished) and whenever it has been idle for ``reconcile_seconds``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.db import close_old_connections

from aggregation import services

logger = logging.getLogger(__name__)


class EmbeddedRunner:
    """One daemon thread that runs item and project recomputation, started by the first submission."""

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


#: The process's runner; ``aggregation.dispatch`` submits to it when ``AGGREGATION_IN_THREAD`` is on.
runner = EmbeddedRunner()
