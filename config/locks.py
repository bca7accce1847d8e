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
#: A project's annotator weights: the project run holds it exclusively from writing new weights until every item
#: aggregate is rewritten with them; an item batch holds it shared from reading the weights to its commit, so a batch
#: computed with old weights can never land after the run that used new ones.
PROJECT_WEIGHTS = 7302


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


@contextmanager
def advisory_lock(*, namespace: int, key: int) -> Iterator[None]:
    """Holds the lock exclusively for the block (waits for it), released on exit; a no-op off PostgreSQL."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [namespace, key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])


def advisory_xact_lock_shared(*, namespace: int, key: int) -> None:
    """Takes the lock shared until the current transaction ends (waits while someone holds it exclusively)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)", [namespace, key])
