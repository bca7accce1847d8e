"""Hot querysets compiled once per process: the queue's scan and its re-check run on every save-and-next, and
building and compiling their ORM expressions cost more CPU than the database spends answering them.

A queryset is built by a function of named values (ids, a float, a time, lists of ids). The first call for a shape
builds it twice with two sets of stand-in values and compiles both; the parameter positions that differ between the
two are the named values, every other parameter is a constant of the query. Later calls only re-bind the values into
the cached SQL text. The shape is the builder's key plus the length of every list (an empty ``pk__in`` changes the
SQL, not just its parameters). The ORM's own SQL is what runs, so the two paths cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model, QuerySet

Value = int | float | datetime | Sequence[int]
M = TypeVar("M", bound=Model)
Builder = Callable[[Mapping[str, Any]], QuerySet[Any]]

# (key, shape) -> (sql, slots): a slot is a value's name with an index into it (-1 for a scalar), or a constant.
_cache: dict[tuple[object, ...], tuple[str, list[tuple[str, int] | tuple[None, object]]]] = {}


def _stand_ins(values: Mapping[str, Value], base: int) -> dict[str, Any]:
    """Values of the same types as ``values``, each distinct from every other and from any real one."""
    out: dict[str, Any] = {}
    serial = base
    for name, value in values.items():
        if isinstance(value, bool):
            raise TypeError(f"{name}: a flag changes a query's shape; put it in the key")
        if isinstance(value, datetime):
            serial += 1
            out[name] = datetime(1901, 1, 1, tzinfo=UTC) + timedelta(seconds=serial)
        elif isinstance(value, float):
            serial += 1
            out[name] = float(serial) + 0.25
        elif isinstance(value, int):
            serial += 1
            out[name] = serial
        else:
            stand = []
            for _ in value:
                serial += 1
                stand.append(serial)
            out[name] = stand
    return out


def _flat(stand_ins: Mapping[str, Any]) -> dict[object, tuple[str, int]]:
    found: dict[object, tuple[str, int]] = {}
    for name, value in stand_ins.items():
        if isinstance(value, list):
            found.update({element: (name, index) for index, element in enumerate(value)})
        else:
            found[value] = (name, -1)
    return found


def _compile(build: Builder, values: Mapping[str, Value]) -> tuple[str, list[tuple[str, int] | tuple[None, object]]]:
    # Positive and inside a 32-bit integer: Django turns a lookup out of the column's range into no query at all.
    first, second = _stand_ins(values, 1_900_000_000), _stand_ins(values, 2_000_000_000)
    sql, params_first = build(first).query.sql_with_params()
    sql_second, params_second = build(second).query.sql_with_params()
    if sql != sql_second or len(params_first) != len(params_second):
        raise RuntimeError("the query's shape depends on its values")
    names_first, names_second = _flat(first), _flat(second)
    slots: list[tuple[str, int] | tuple[None, object]] = []
    for one, two in zip(params_first, params_second, strict=True):
        if one == two:
            if one in names_first:  # cannot happen with distinct stand-ins; guards a silent constant
                raise RuntimeError("a value was taken for a constant")
            slots.append((None, one))
            continue
        slot = names_first.get(one)
        if slot is None or names_second.get(two) != slot:
            raise RuntimeError("a value reached the SQL transformed; it cannot be re-bound")
        slots.append(slot)
    return sql, slots


def bound_sql(key: object, build: Builder, values: Mapping[str, Value]) -> tuple[str, list[object]]:
    """The SQL of ``build(values)`` and its parameters, compiled once per shape."""
    shape = (key, *(len(v) for v in values.values() if not isinstance(v, int | float | datetime)))
    found = _cache.get(shape)
    if found is None:
        found = _cache[shape] = _compile(build, values)
    sql, slots = found
    params: list[object] = []
    for name, index in slots:
        if name is None:
            params.append(index)
            continue
        value = values[name]
        params.append(value[index] if isinstance(value, Sequence) and isinstance(index, int) else value)
    return sql, params


def first_row(model: type[M], key: object, build: Builder, values: Mapping[str, Value]) -> M | None:
    """``build(values).first()`` (annotations as attributes), through the compiled SQL."""

    def first(named: Mapping[str, Any]) -> QuerySet[Any]:
        query = build(named)
        return (query if query.ordered else query.order_by("pk"))[:1]

    sql, params = bound_sql(key, first, values)
    for found in model._default_manager.raw(sql, params):
        return found
    return None


def rows(model: type[M], key: object, build: Builder, values: Mapping[str, Value]) -> list[M]:
    sql, params = bound_sql(key, build, values)
    return list(model._default_manager.raw(sql, params))


def enabled() -> bool:
    """Only on PostgreSQL: elsewhere the ORM path runs (SQLite has no row locks to mirror, and tests compare)."""
    return connection.vendor == "postgresql"
