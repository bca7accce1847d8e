"""A real Celery worker keeps its PostgreSQL connection from task to task: saves' follow-ups open no new sessions.

Celery's Django fixup closes every connection around each task unless CELERY_DB_REUSE_MAX is set; a new session
per task costs a backend fork and a login on the server for every save. PostgreSQL counts the sessions opened on
each database (pg_stat_database.sessions, client backends only), and the test database is this test's own.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from aggregation import dispatch
from aggregation.models import ItemAggregate, ProjectAggregate
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.processes import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

SAVES = 12


def _sessions_opened() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # a fresh read, not this transaction's cached one
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


def _other_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])


def _saved(item, annotator, values) -> None:
    with transaction.atomic():
        annotate_ifs(item, annotator, values)
        dispatch.on_annotations_changed(project_id=item.project_id, item_ids=[item.pk])


def _aggregated(item, n_annotators: int) -> bool:
    return ItemAggregate.objects.filter(item=item, n_annotators=n_annotators).exists()


def test_the_worker_opens_no_session_per_save(worker):
    project, items, annotators = project_make(n_items=SAVES + 1, n_annotators=1)
    # Warm up: the worker's first task opens its connection.
    _saved(items[0], annotators[0], [(800, 100), (100, 800)])
    wait_for(lambda: _aggregated(items[0], 1), "the first save's aggregate", worker.log)
    # and its first project recompute opens the connection that holds the recompute lock (config/locks.py).
    wait_for(lambda: ProjectAggregate.objects.filter(project=project).exists(), "the project figures", worker.log)
    before = _sessions_opened()

    for item in items[1:]:
        _saved(item, annotators[0], [(700, 200), (200, 700)])
        # One at a time, so a worker that reconnected per task would do so once per save (and a project recompute,
        # debounced by 1 s, runs between some of them).
        wait_for(lambda item=item: _aggregated(item, 1), "the save's aggregate", worker.log)

    # A session's counters reach the statistics for sure when it ends: stop the worker and wait for its backend
    # to go, then count.
    worker.stop()
    wait_for(lambda: _other_backends() == 0, "the worker's backend to end", worker.log)
    opened = _sessions_opened() - before

    # At most the worker's own two (its tasks' and its lock's), if their opening was not yet counted at the first
    # reading; a worker reconnecting per task opens one per save at least.
    assert opened <= 2, f"{opened} PostgreSQL sessions opened for {SAVES} saves: the worker reconnects per task"
