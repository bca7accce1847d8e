"""One holder at a time across processes and machines: a PostgreSQL advisory lock, held by the session.

Advisory locks need no table and end with the session, so a worker killed mid-run frees its lock at once (a lock
row or a Redis key would wait for an expiry). Other databases (the embedded SQLite default runs one process with a
single background thread) have nobody to exclude: the lock is always granted there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

#: Namespaces (the first key of the two-key lock), so different kinds of work never share a lock by accident.
PROJECT_RECOMPUTE = 7301


@contextmanager
def advisory_lock_try(*, namespace: int, key: int) -> Iterator[bool]:
    """Yields True when this session now holds the lock (released on exit), False when another session holds it."""
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])
