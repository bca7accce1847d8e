"""Bulk writes that stay fast at 100,000 rows: COPY on PostgreSQL, bulk_create elsewhere.

Building one INSERT for thousands of values costs Django and the driver more than the database spends storing
them; COPY streams the rows instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

BATCH_SIZE = 2000


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def insert_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Insert rows (tuples in ``columns`` order) whose ids nobody needs back. JSON columns take text."""
    if not is_postgresql():
        model._default_manager.bulk_create(
            [model(**dict(zip(columns, row, strict=True))) for row in rows], batch_size=BATCH_SIZE
        )
        return
    copy_rows(model._meta.db_table, columns, rows)


def copy_rows(table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """COPY rows (tuples in ``columns`` order) into ``table`` (PostgreSQL only; temporary tables too): the one COPY
    writer of the project."""
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """Take ``count`` ids from a PostgreSQL table's sequence, so rows can be COPYed with ids known in advance."""
    if count == 0:
        return []
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, count])
        return [row[0] for row in cursor.fetchall()]
