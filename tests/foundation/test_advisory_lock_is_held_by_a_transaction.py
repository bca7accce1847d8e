"""config.locks: one holder at a time, held by a transaction (PgBouncer's transaction mode keeps no session-level
lock), while the guarded work commits on the thread's own connection."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from config import locks
from tests.processes import worker_database_url

pytestmark = pytest.mark.postgres

NAMESPACE, KEY = locks.PROJECT_RECOMPUTE, 424242


def _taken_by_another_process() -> bool:
    """Whether another client can take the lock right now (it releases it at once if it can)."""
    with psycopg.connect(worker_database_url(), autocommit=False) as other:
        return not other.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [NAMESPACE, KEY]).fetchone()[0]


def _held_in() -> list[tuple[str, str]]:
    """(how the holder's backend is, whose it is) for each holder of the lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.state, CASE WHEN a.pid = pg_backend_pid() THEN 'this thread' ELSE 'another' END "
            "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.classid = %s AND l.objid = %s AND l.granted",
            [NAMESPACE, KEY],
        )
        return cursor.fetchall()


def test_one_holder_at_a_time_by_an_open_transaction(transactional_db):
    with locks.advisory_lock_try(namespace=NAMESPACE, key=KEY) as acquired:
        assert acquired
        assert _taken_by_another_process()
        # Held by a transaction of a connection of its own, not by a session and not by the thread's connection.
        assert _held_in() == [("idle in transaction", "another")]
        with locks.advisory_lock_try(namespace=NAMESPACE, key=KEY) as again:
            assert not again
        # The work commits on the thread's connection meanwhile; the lock stays.
        assert connection.get_autocommit()
        assert _taken_by_another_process()
    assert not _taken_by_another_process()
    assert _held_in() == []


def _failing_work() -> None:
    with locks.advisory_lock_try(namespace=NAMESPACE, key=KEY) as acquired:
        assert acquired
        raise RuntimeError("the recompute failed")


def test_the_lock_is_freed_when_the_work_fails(transactional_db):
    with pytest.raises(RuntimeError):
        _failing_work()
    assert not _taken_by_another_process()
