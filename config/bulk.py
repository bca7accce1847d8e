"""Bulk writes that stay fast at 100,000 rows (COPY on PostgreSQL, bulk_create elsewhere), and a row with its
children and counters in one statement.

Building one INSERT for thousands of values costs Django and the driver more than the database spends storing
them; COPY streams the rows instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import connection, models
from django.db.models import F

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
    """COPY rows (tuples in ``columns`` order) into ``table`` (PostgreSQL only; temporary tables too): the project's
    COPY writer of rows, beside :func:`copy_binary` for columns of numbers."""
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN"
    # The driver's own cursor: its errors become Django's (IntegrityError …) as the ORM's do.
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


#: One column of a binary COPY block: an array (int64 → bigint, float64 → double precision), or one value for every
#: row of the block (str → text or varchar, int → bigint, None → NULL).
Column = np.ndarray[Any, Any] | str | int | None
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, no flags, no header extension
_BINARY_TRAILER = b"\xff\xff"


def _binary_block(columns: Sequence[Column]) -> bytes:
    """Rows of PostgreSQL's binary COPY format, built whole by numpy: every row of a block has the same layout (a
    constant takes the same bytes in each), so the rows are one structured array."""
    n_rows = next((c.size for c in columns if isinstance(c, np.ndarray)), 0)
    fields: list[tuple[str, str]] = [("count", ">i2")]
    values: dict[str, Any] = {"count": len(columns)}
    for k, column in enumerate(columns):
        length = f"length{k}"
        fields.append((length, ">i4"))
        if column is None:
            values[length] = -1
            continue
        if isinstance(column, str):
            data: Any = column.encode()
            kind = f"S{len(data)}"
        elif isinstance(column, int):
            data, kind = column, ">i8"
        else:
            data, kind = column, (">f8" if column.dtype.kind == "f" else ">i8")
        size = np.dtype(kind).itemsize
        values[length] = size
        if size:
            fields.append((f"value{k}", kind))
            values[f"value{k}"] = data
    block = np.empty(n_rows, dtype=np.dtype(fields))
    for name, value in values.items():
        block[name] = value
    return block.tobytes()


def copy_binary(table: str, columns: Sequence[str], blocks: Iterable[Sequence[Column]]) -> None:
    """COPY rows given by column (``blocks``: for each block, one value per name in ``columns``) in the binary
    format (PostgreSQL only; temporary tables too). For many rows of numbers: formatting them row by row in Python
    cost more than the database spends storing them."""
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN WITH (FORMAT BINARY)"
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        copy.write(_BINARY_HEADER)
        for block in blocks:
            copy.write(_binary_block(block))
        copy.write(_BINARY_TRAILER)


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """Take ``count`` ids from a PostgreSQL table's sequence, so rows can be COPYed with ids known in advance."""
    if count == 0:
        return []
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, count])
        return [row[0] for row in cursor.fetchall()]


@contextmanager
def checks_per_statement() -> Iterator[None]:
    """Inside a transaction: check foreign keys at the end of each statement rather than all at the commit
    (PostgreSQL; Django makes them DEFERRABLE INITIALLY DEFERRED).

    A bulk write of hundreds of thousands of rows otherwise queues an event per row and key in the server's memory
    and runs every check in the COMMIT; checked per statement, the queue stays one statement long and the rows the
    checks read are still in the cache. The same checks run either way. Deferral is restored when the block ends
    normally; after an error the transaction (or savepoint) is rolled back, which restores it too.
    """
    if not is_postgresql():
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


@dataclass(frozen=True)
class RowUpdate:
    """An UPDATE of one row by primary key: ``values`` set by field name, ``increments`` added to the stored
    value."""

    model: type[models.Model]
    pk: Any
    values: Mapping[str, Any] = field(default_factory=dict)
    increments: Mapping[str, int] = field(default_factory=dict)


def _column(model: type[models.Model], name: str) -> str:
    """The quoted column of a concrete field, by field name."""
    model_field = model._meta.get_field(name)
    assert isinstance(model_field, models.Field)
    return connection.ops.quote_name(str(model_field.column))


def _column_values(instance: models.Model) -> tuple[list[str], list[Any], list[str]]:
    """Quoted column names, their database values and SQL casts, as ``Model.save()`` would insert them."""
    names, values, casts = [], [], []
    for model_field in instance._meta.concrete_fields:
        if model_field.primary_key and getattr(instance, model_field.attname) is None:
            continue
        value = model_field.pre_save(instance, add=True)  # fills auto_now(_add) fields like save() does
        names.append(connection.ops.quote_name(str(model_field.column)))
        values.append(model_field.get_db_prep_save(value, connection))
        casts.append(str(model_field.db_type(connection)))
    return names, values, casts


def insert_together(
    instance: models.Model,
    *,
    children: Sequence[tuple[str, Sequence[models.Model]]] = (),
    updates: Sequence[RowUpdate] = (),
) -> None:
    """Insert ``instance``, the ``children`` that point at it (their foreign key's name, unsaved rows) and the
    ``updates``, as one statement on PostgreSQL; sets ``instance.pk``. The children's ids are not read back.

    A request that writes a row, its children and two counters in separate statements pays a round trip for each;
    data-modifying CTEs run exactly once each, in one statement. Elsewhere (SQLite) the same writes run one by one.
    Rows go in as ``save()``/``bulk_create`` would write them (auto_now fields filled), but no signals are sent.
    """
    if not is_postgresql():
        instance.save(force_insert=True)
        for fk_name, rows in children:
            for row in rows:
                setattr(row, fk_name, instance)
            if rows:
                type(rows[0])._default_manager.bulk_create(rows)
        for update in updates:
            changes = {**update.values, **{name: F(name) + n for name, n in update.increments.items()}}
            update.model._default_manager.filter(pk=update.pk).update(**changes)
        return
    quote = connection.ops.quote_name
    meta = instance._meta
    names, values, _ = _column_values(instance)
    parent_pk = quote(str(meta.pk.column))
    parts = [
        f"parent AS (INSERT INTO {quote(meta.db_table)} ({', '.join(names)}) "
        f"VALUES ({', '.join(['%s'] * len(values))}) RETURNING {parent_pk})"
    ]
    params: list[Any] = list(values)
    for index, (fk_name, rows) in enumerate(children):
        if not rows:
            continue
        child_meta = rows[0]._meta
        fk_column = _column(type(rows[0]), fk_name)
        columns: list[str] = []
        row_sql = []
        for row in rows:
            row_names, row_values, casts = _column_values(row)
            # The foreign key comes from the parent's RETURNING; every other value is cast to its column's type
            # (a VALUES list has no column types of its own).
            kept = [(n, v, c) for n, v, c in zip(row_names, row_values, casts, strict=True) if n != fk_column]
            columns = [n for n, _, _ in kept]
            row_sql.append("(" + ", ".join(f"%s::{c}" for _, _, c in kept) + ")")
            params.extend(v for _, v, _ in kept)
        parts.append(
            f"c{index} AS (INSERT INTO {quote(child_meta.db_table)} ({fk_column}, {', '.join(columns)}) "
            f"SELECT parent.{parent_pk}, v.* FROM parent, (VALUES {', '.join(row_sql)}) AS v)"
        )
    for index, update in enumerate(updates):
        update_meta = update.model._meta
        sets = []
        for name, value in update.values.items():
            model_field = update_meta.get_field(name)
            assert isinstance(model_field, models.Field)
            sets.append(f"{_column(update.model, name)} = %s::{model_field.db_type(connection)}")
            params.append(model_field.get_db_prep_save(value, connection))
        for name, amount in update.increments.items():
            column = _column(update.model, name)
            sets.append(f"{column} = {column} + %s")
            params.append(amount)
        parts.append(
            f"u{index} AS (UPDATE {quote(update_meta.db_table)} SET {', '.join(sets)} "
            f"WHERE {quote(str(update_meta.pk.column))} = %s)"
        )
        params.append(update.pk)
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(parts)} SELECT {parent_pk} FROM parent", params)
        instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    for fk_name, rows in children:
        for row in rows:
            setattr(row, fk_name, instance)
