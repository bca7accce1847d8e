"""One holder at a time across processes and machines: a PostgreSQL advisory lock held by a transaction.

The lock is transaction-scoped (``pg_try_advisory_xact_lock``, ``pg_advisory_xact_lock``) so it works behind
PgBouncer in transaction mode, where a session-level lock would stay on whichever server connection took it and be
released, or not, on another. The guarded work commits in several transactions of its own (a first recompute of a
large project commits its items a chunk at a time), so the lock cannot live in the work's transaction: a connection
of its own opens a transaction, takes the lock and keeps the transaction open until the work ends. Behind PgBouncer
that pins one server connection for the duration (count one per concurrently running recompute, two while its
weights are being rewritten, when sizing the pool). A lock taken inside another's block gets a connection of its
own too: ending a transaction releases every lock it holds, so one connection per nesting depth.

A Celery worker keeps those connections from task to task (one PostgreSQL session per worker thread and depth, not
one per recompute); elsewhere (eager tasks in a request or a test) they are opened for the block and closed after,
so nothing outlives the caller's own connection.

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
#: A project's annotator weights: the project run holds it exclusively from writing new weights until every item
#: aggregate is rewritten with them; an item batch holds it shared from reading the weights to its commit, so a batch
#: computed with old weights can never land after the run that used new ones.
PROJECT_WEIGHTS = 7302

_local = threading.local()


def _in_worker() -> bool:
    """Whether this runs a Celery task in a worker (not eagerly, in the caller's process and thread)."""
    from celery import current_task

    # A proxy: false when no task is running.
    return bool(current_task) and not getattr(current_task.request, "is_eager", True)


def _lock_connection(*, keep: bool, depth: int) -> Any:
    """A psycopg connection (autocommit off) on the default database's settings, the test database in tests; the
    worker's kept one for this nesting depth when ``keep``."""
    kept: dict[int, Any] = _local.__dict__.setdefault("kept", {})
    if keep:
        found = kept.get(depth)
        if found is not None and not found.closed and not found.broken:
            return found
    raw = connection.get_new_connection(connection.get_connection_params())
    if keep:
        kept[depth] = raw
    return raw


@contextmanager
def _held(*, namespace: int, key: int, wait: bool) -> Iterator[bool]:
    import psycopg

    keep = _in_worker()
    depth = _local.__dict__.setdefault("depth", 0)
    statement = "SELECT pg_advisory_xact_lock(%s, %s), true" if wait else "SELECT pg_try_advisory_xact_lock(%s, %s)"
    raw = _lock_connection(keep=keep, depth=depth)
    _local.depth = depth + 1
    try:
        try:
            acquired = bool(raw.execute(statement, [namespace, key]).fetchone()[-1])
        except psycopg.OperationalError:
            if not keep:
                raise
            # The kept connection died since the last task (a PostgreSQL restart): once more on a new one.
            raw.close()
            raw = _lock_connection(keep=True, depth=depth)
            acquired = bool(raw.execute(statement, [namespace, key]).fetchone()[-1])
        yield acquired
    finally:
        _local.depth = depth
        # Ending the transaction releases the lock (and returns the server connection to PgBouncer's pool).
        with suppress(psycopg.Error):
            raw.rollback()
        if not keep or raw.broken:
            raw.close()


@contextmanager
def advisory_lock_try(*, namespace: int, key: int) -> Iterator[bool]:
    """Yields True when this process now holds the lock (released on exit), False when another holds it."""
    if connection.vendor != "postgresql":
        yield True
        return
    with _held(namespace=namespace, key=key, wait=False) as acquired:
        yield acquired


@contextmanager
def advisory_lock(*, namespace: int, key: int) -> Iterator[None]:
    """Holds the lock exclusively for the block (waits for it), released on exit; a no-op off PostgreSQL.

    Inside a transaction of the caller's (a test's, or work run inside another's atomic block) the lock is taken by
    that transaction instead and held until it ends: a lock connection of its own would wait for the shared locks
    this very transaction may hold (``advisory_xact_lock_shared``), and wait forever."""
    if connection.vendor != "postgresql":
        yield
        return
    if connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, key])
        yield
        return
    with _held(namespace=namespace, key=key, wait=True):
        yield


def advisory_xact_lock_shared(*, namespace: int, key: int) -> None:
    """Takes the lock shared until the current transaction ends (waits while someone holds it exclusively)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)", [namespace, key])
