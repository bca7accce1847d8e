"""One holder at a time across processes and machines: a PostgreSQL advisory lock held by a transaction.

The lock is transaction-scoped (``pg_try_advisory_xact_lock``) so it works behind PgBouncer in transaction mode,
where a session-level lock would stay on whichever server connection took it and be released, or not, on another.
The guarded work commits in several transactions of its own (a first recompute of a large project commits its items
a chunk at a time), so the lock cannot live in the work's transaction: a connection of its own opens a transaction,
takes the lock and keeps the transaction open until the work ends. Behind PgBouncer that pins one server connection
for the duration (count one per concurrently running recompute when sizing the pool).

A Celery worker keeps that connection from task to task (one PostgreSQL session per worker thread, not one per
recompute); elsewhere (eager tasks in a request or a test) it is opened for the block and closed after, so nothing
outlives the caller's own connection.

Advisory locks need no table and end with their transaction, so a worker killed mid-run frees its lock as soon as
its connection drops (a lock row or a Redis key would wait for an expiry). Other databases (the embedded SQLite
default runs one process with a single background thread) have nobody to exclude: the lock is always granted there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from django.db import connection

#: Namespaces (the first key of the two-key lock), so different kinds of work never share a lock by accident.
PROJECT_RECOMPUTE = 7301

_kept = threading.local()


def _in_worker() -> bool:
    """Whether this runs a Celery task in a worker (not eagerly, in the caller's process and thread)."""
    from celery import current_task

    # A proxy: false when no task is running.
    return bool(current_task) and not getattr(current_task.request, "is_eager", True)


def _lock_connection(*, keep: bool) -> Any:
    """A psycopg connection (autocommit off) on the default database's settings, the test database in tests."""
    if keep:
        kept = getattr(_kept, "connection", None)
        if kept is not None and not kept.closed and not kept.broken:
            return kept
    raw = connection.get_new_connection(connection.get_connection_params())
    if keep:
        _kept.connection = raw
    return raw


def _try_lock(raw: Any, namespace: int, key: int) -> bool:
    return bool(raw.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [namespace, key]).fetchone()[0])


@contextmanager
def advisory_lock_try(*, namespace: int, key: int) -> Iterator[bool]:
    """Yields True when this process now holds the lock (released on exit), False when another holds it."""
    if connection.vendor != "postgresql":
        yield True
        return
    import psycopg

    keep = _in_worker()
    raw = _lock_connection(keep=keep)
    try:
        try:
            acquired = _try_lock(raw, namespace, key)
        except psycopg.OperationalError:
            if not keep:
                raise
            # The kept connection died since the last task (a PostgreSQL restart): once more on a new one.
            raw.close()
            raw = _lock_connection(keep=True)
            acquired = _try_lock(raw, namespace, key)
        yield acquired
    finally:
        # Ending the transaction releases the lock (and returns the server connection to PgBouncer's pool).
        with suppress(psycopg.Error):
            raw.rollback()
        if not keep or raw.broken:
            raw.close()
