"""One holder at a time across processes and machines: a PostgreSQL advisory lock held by a transaction.

The lock is transaction-scoped (``pg_try_advisory_xact_lock``) so it works behind PgBouncer in transaction mode,
where a session-level lock would stay on whichever server connection took it and be released, or not, on another.
The guarded work commits in several transactions of its own (a first recompute of a large project commits its items
a chunk at a time), so the lock cannot live in the work's transaction: a connection of its own opens a transaction,
takes the lock and keeps the transaction open until the work ends. Behind PgBouncer that pins one server connection
for the duration (count one per concurrently running recompute when sizing the pool).

Advisory locks need no table and end with their transaction, so a worker killed mid-run frees its lock as soon as
its connection drops (a lock row or a Redis key would wait for an expiry). Other databases (the embedded SQLite
default runs one process with a single background thread) have nobody to exclude: the lock is always granted there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections

#: Namespaces (the first key of the two-key lock), so different kinds of work never share a lock by accident.
PROJECT_RECOMPUTE = 7301


@contextmanager
def advisory_lock_try(*, namespace: int, key: int) -> Iterator[bool]:
    """Yields True when this process now holds the lock (released on exit), False when another holds it."""
    if connection.vendor != "postgresql":
        yield True
        return
    # A new wrapper on the same settings (the test database in tests), not the thread's shared connection: its
    # transaction must stay open while the work commits on the shared one.
    holder = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [namespace, key])
            acquired = bool(cursor.fetchone()[0])
        yield acquired
    finally:
        # Ending the transaction releases the lock; closing returns the server connection to the pool.
        with suppress(DatabaseError):
            holder.rollback()
        holder.close()
