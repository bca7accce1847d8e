"""Hot querysets compiled once per process: the queue's scan and its re-check run on every save-and-next, and
building and compiling their ORM expressions cost more CPU than the database spends answering them.

A queryset is built by a function of named values (ids, a float, a time, lists of ids). The first call for a shape
builds it three times: with two sets of stand-in values, whose differing parameter positions are the named values
(every other parameter is a constant of the query), and with the caller's real values, whose SQL must be the
stand-ins' SQL and whose parameters must be exactly the re-bound ones. Later calls only re-bind the values into the
cached SQL text. The ORM's own SQL is what runs, so the two paths cannot drift apart.

A builder the cache cannot mirror is refused at its first use with :class:`UnsafeBuilder`, never compiled wrongly.
Where ``CHECK_COMPILED_SQL`` is on (the tests) the refusal raises, so the builder gets fixed; elsewhere the call
runs the ORM's own queryset instead and logs a warning, so a refused shape costs speed, never a failed request:
- a named value that reaches no parameter (Django drops a lookup whose stand-in is out of the column's range, or a
  builder ignores it): every named value, and every element of a list, must be bound;
- a value that reaches the SQL transformed (``x + 1``): compute it before passing it;
- a builder whose SQL depends on a value (``if values["n"]: …``): the shape key holds each scalar's type and sign
  class (zero, negative, positive: ``2`` and ``2.5`` are two shapes, as the ORM casts a float for an integer
  column) and each list's length, a zero's stand-in is zero, and the first call of every shape is checked against
  the ORM's own SQL for its real values; ``CHECK_COMPILED_SQL`` (on in the tests) checks every call, and a property
  test drives every hot builder with generated values, so a builder that branches on a value's size cannot pass
  the suite either;
- a list with repeated ids: the ORM drops repeats from ``IN (…)``, so the values are taken without them (first
  occurrence kept), and the shape is the length of what remains;
- ``None``, flags and lists holding anything but integers: they change a query's shape (``IS NULL``, ``NOT IN``
  with a NULL matches nothing), so they belong in the key or in the builder, not in the values.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import Model, QuerySet

logger = logging.getLogger(__name__)

Value = int | float | datetime | Sequence[int]
M = TypeVar("M", bound=Model)
Builder = Callable[[Mapping[str, Any]], QuerySet[Any]]
Slot = tuple[str, int] | tuple[None, object]

# (key, shape) -> (sql, slots): a slot is a value's name with an index into it (-1 for a scalar), or a constant.
# Least recently used first; bounded, since every list length is a shape of its own.
_cache: OrderedDict[tuple[object, ...], tuple[str, list[Slot]] | UnsafeBuilder] = OrderedDict()
CACHE_SHAPES = 512


class UnsafeBuilder(RuntimeError):
    """A builder whose SQL the cache cannot re-bind faithfully; use the ORM path or change the builder."""


def _value_class(name: str, value: object) -> object:
    """The part of a value that may change a query's SQL: a scalar's sign class, a list's length."""
    if value is None or isinstance(value, bool):
        raise UnsafeBuilder(f"{name}: None and flags change a query's shape; put them in the key")
    if isinstance(value, datetime):
        return "time"
    if isinstance(value, int | float):
        return (type(value).__name__, (value > 0) - (value < 0))
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if not all(isinstance(element, int) and not isinstance(element, bool) for element in value):
            raise UnsafeBuilder(f"{name}: a list of values may hold only integers (a NULL in NOT IN matches nothing)")
        return len(value)
    raise UnsafeBuilder(f"{name}: {type(value).__name__} values cannot be re-bound")


def _stand_ins(values: Mapping[str, Value], base: int) -> dict[str, Any]:
    """Values of the same types and sign classes as ``values``, each distinct from every other and any real one.

    A zero stays zero: its shape holds only zeros, so within a shape it is a constant like any other."""
    out: dict[str, Any] = {}
    serial = base
    for name, value in values.items():
        if isinstance(value, datetime):
            serial += 1
            out[name] = datetime(1901, 1, 1, tzinfo=UTC) + timedelta(seconds=serial)
        elif isinstance(value, int | float):
            serial += 1
            sign = (value > 0) - (value < 0)
            out[name] = (float(serial) + 0.25) * sign if isinstance(value, float) else serial * sign
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
        elif value != 0:
            found[value] = (name, -1)
    return found


def _rebind(slots: Sequence[Slot], values: Mapping[str, Value]) -> list[object]:
    params: list[object] = []
    for name, index in slots:
        if name is None:
            params.append(index)
            continue
        value = values[name]
        params.append(value[index] if isinstance(value, Sequence) and isinstance(index, int) else value)
    return params


# Two families of stand-ins: large ones that no real id reaches, then small ones for a column of 16-bit integers
# (Django drops a lookup whose value is out of the column's range, so a large stand-in would bind nothing there).
_FAMILIES = ((1_900_000_000, 2_000_000_000), (20_000, 30_000))


def _compile_with(build: Builder, values: Mapping[str, Value], bases: tuple[int, int]) -> tuple[str, list[Slot]]:
    first, second = _stand_ins(values, bases[0]), _stand_ins(values, bases[1])
    sql, params_first = _sql(build, first)
    sql_second, params_second = _sql(build, second)
    if sql != sql_second or len(params_first) != len(params_second):
        raise UnsafeBuilder("the query's shape depends on its values")
    names_first, names_second = _flat(first), _flat(second)
    slots: list[Slot] = []
    for one, two in zip(params_first, params_second, strict=True):
        if one == two:
            if one in names_first:  # a stand-in equal to a constant of the query: nothing tells them apart
                raise UnsafeBuilder("a value was taken for a constant")
            slots.append((None, one))
            continue
        slot = names_first.get(one)
        if slot is None or names_second.get(two) != slot:
            raise UnsafeBuilder("a value reached the SQL transformed; it cannot be re-bound")
        slots.append(slot)
    wanted = {
        (name, index)
        for name, value in first.items()
        for index in (range(len(value)) if isinstance(value, list) else [-1] if value != 0 else [])
    }
    if missing := {name for name, _ in wanted - set(slots)}:
        raise UnsafeBuilder(f"{', '.join(sorted(missing))}: bound to no parameter (a lookup Django dropped, or unused)")
    return sql, slots


def _sql(build: Builder, values: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    try:
        return build(values).query.sql_with_params()
    except (EmptyResultSet, FullResultSet) as dropped:
        # A lookup out of its column's range: Django answers without any SQL for these values.
        raise UnsafeBuilder("a value is out of its column's range; Django compiles no SQL for it") from dropped


def _check_against_orm(build: Builder, values: Mapping[str, Value], sql: str, params: list[object]) -> None:
    real_sql, real_params = _sql(build, values)
    if real_sql != sql or list(real_params) != params:
        raise UnsafeBuilder("the query's SQL for these values is not the compiled SQL (a branch on a value?)")


def _compile(build: Builder, values: Mapping[str, Value]) -> tuple[str, list[Slot]]:
    failure: UnsafeBuilder | None = None
    for bases in _FAMILIES:
        try:
            sql, slots = _compile_with(build, values, bases)
        except UnsafeBuilder as unsafe:
            failure = unsafe
            continue
        # The first call of every shape against the ORM's own SQL for the real values: a builder that branches on
        # a value, or a stand-in that took another path than the real value, is refused here.
        _check_against_orm(build, values, sql, _rebind(slots, values))
        return sql, slots
    assert failure is not None
    raise failure


def _without_repeats(values: Mapping[str, Value]) -> dict[str, Value]:
    return {
        name: list(dict.fromkeys(value)) if isinstance(value, Sequence) and not isinstance(value, str) else value
        for name, value in values.items()
    }


def bound_sql(key: object, build: Builder, values: Mapping[str, Value]) -> tuple[str, list[object]]:
    """The SQL of ``build(values)`` and its parameters, compiled once per shape."""
    values = _without_repeats(values)
    shape = (key, *((name, _value_class(name, value)) for name, value in values.items()))
    found = _cache.get(shape)
    if found is None:
        try:
            found = _compile(build, values)
        except UnsafeBuilder as refused:
            found = refused  # remembered: a refused shape is not compiled again
        _cache[shape] = found
        if len(_cache) > CACHE_SHAPES:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(shape)
    if isinstance(found, UnsafeBuilder):
        raise UnsafeBuilder(str(found))
    sql, slots = found
    params = _rebind(slots, values)
    if settings.CHECK_COMPILED_SQL:
        _check_against_orm(build, values, sql, params)
    return sql, params


def first_row(model: type[M], key: object, build: Builder, values: Mapping[str, Value]) -> M | None:
    """``build(values).first()`` (annotations as attributes), through the compiled SQL."""

    def first(named: Mapping[str, Any]) -> QuerySet[Any]:
        query = build(named)
        return (query if query.ordered else query.order_by("pk"))[:1]

    bound = _bound_or_none(key, first, values)
    if bound is None:
        return first(values).first()
    for found in model._default_manager.raw(*bound):
        return found
    return None


def rows(model: type[M], key: object, build: Builder, values: Mapping[str, Value]) -> list[M]:
    """``list(build(values))`` through the compiled SQL."""
    bound = _bound_or_none(key, build, values)
    if bound is None:
        return list(build(values))
    return list(model._default_manager.raw(*bound))


def _bound_or_none(key: object, build: Builder, values: Mapping[str, Value]) -> tuple[str, list[object]] | None:
    """:func:`bound_sql`, or None where it refuses and ``CHECK_COMPILED_SQL`` is off (the caller runs the ORM)."""
    try:
        return bound_sql(key, build, values)
    except UnsafeBuilder as refused:
        if settings.CHECK_COMPILED_SQL:
            raise
        logger.warning("Compiled query %r refused these values (%s); the ORM answers", key, refused)
        return None


def enabled() -> bool:
    """Only on PostgreSQL and with the fast paths on (``FAST_PATHS``): elsewhere the ORM path runs (SQLite has no
    row locks to mirror, and tests compare)."""
    return settings.FAST_PATHS and connection.vendor == "postgresql"
