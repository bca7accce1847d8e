"""Reads that may come from a PostgreSQL read replica (DATABASE_REPLICA_URL): the leads' dashboard, inside
``replica_reads()``. Everything else, every write and every read inside a transaction, goes to the primary.

A replica applies the primary's changes a moment later, so a page read from it says how far behind it was
(``replica_lag_seconds``). Membership is read there too: someone added to a project a second ago may get a 404 from
the dashboard for that long, and someone removed may still see it for that long.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

REPLICA = "replica"
_reading = ContextVar("replica_reads", default=False)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


@contextmanager
def replica_reads() -> Iterator[bool]:
    """Reads in the block go to the replica when one is configured; yields whether one is."""
    token = _reading.set(True)
    try:
        yield replica_configured()
    finally:
        _reading.reset(token)


def replica_lag_seconds() -> float | None:
    """How far behind the primary the replica's data is (0 when it has replayed everything it received, or when
    the "replica" is the primary itself); None without a replica."""
    if not replica_configured():
        return None
    with connections[REPLICA].cursor() as cursor:
        cursor.execute(
            "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0 "
            "WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 "
            "ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END"
        )
        return float(cursor.fetchone()[0])


class ReplicaRouter:
    """Sends reads to the replica inside ``replica_reads()``, unless the primary's connection is in a transaction
    (its reads must see its own writes)."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        if _reading.get() and replica_configured() and not connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return REPLICA
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # the same data on both

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
