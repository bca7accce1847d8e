"""A digest of every table, for tests that share one world between cases: taken before and after a case, it proves
the case changed nothing (a refused write) or that what it changed was rolled back (the next case starts from the
world as built)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from django.db import connection

Digest = dict[str, tuple[int, str]]


def _tables() -> list[str]:
    # Every model's table, from the models alone (no catalogue query): the test database is fully migrated.
    return sorted(connection.introspection.django_table_names(only_existing=False, include_views=False))


def database_digest(other: Any = None) -> Digest:
    """{table: (row count, digest of its rows)} for every table of an installed model. ``other``: a DB-API connection
    to another PostgreSQL database with the same tables (a restored copy) to digest instead."""
    tables = _tables()
    quote = connection.ops.quote_name
    if other is not None or connection.vendor == "postgresql":
        # One statement for the whole database; rows are hashed as text and sorted, so row order does not matter.
        sql = " UNION ALL ".join(
            f"SELECT %s, count(*), md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) "
            f"FROM {quote(table)} t"
            for table in tables
        )
        with (other or connection).cursor() as cursor:
            cursor.execute(sql, tables)
            return {table: (int(count), digest) for table, count, digest in cursor.fetchall()}
    digests: Digest = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT * FROM {quote(table)}")
            rows = sorted(repr(row) for row in cursor.fetchall())
            digests[table] = (len(rows), hashlib.md5("\n".join(rows).encode()).hexdigest())
    return digests


def changes(before: Mapping[str, tuple[int, str]], after: Mapping[str, tuple[int, str]]) -> dict[str, str]:
    """The tables whose rows differ, each with its row count before → after (an empty dict: nothing changed)."""
    return {
        table: f"{before.get(table, (0, ''))[0]} → {after.get(table, (0, ''))[0]} rows"
        for table in sorted(set(before) | set(after))
        if before.get(table) != after.get(table)
    }
