"""The compile cache never runs SQL that differs from the ORM's: each way a builder could be mirrored wrongly (a lookup
Django drops for an out-of-range stand-in, a branch on a value, None, a NULL in a list, an unused or transformed
value) either compiles to the ORM's own rows or is refused with ``UnsafeBuilder`` at its first use."""

from __future__ import annotations

import pytest
from django.db import connection

from config import compiled_sql
from config.compiled_sql import UnsafeBuilder
from projects.models import Item

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the compiled path runs on PostgreSQL only")


def _both_ways(key, build, values):
    compiled = [item.pk for item in compiled_sql.rows(Item, key, build, values)]
    orm = [item.pk for item in build(values)]
    return compiled, orm


@pytest.fixture
def items_with_extra_labels(project):
    items = list(project.items.order_by("pk")[:4])
    assert len(items) == 4
    for extra, item in enumerate(items):
        Item.objects.filter(pk=item.pk).update(extra_labels=extra)
    return items


def test_a_small_integer_column_keeps_its_lookup(project, items_with_extra_labels):
    """The large stand-in overflows a PositiveSmallIntegerField and Django drops the lookup as always true; the
    small family binds it, so the filter is in the SQL and the rows are the ORM's."""

    def fewer_extra(values):
        return Item.objects.filter(project_id=values["project_id"], extra_labels__lt=values["most"]).order_by("pk")

    for most in (1, 2, 3):
        compiled, orm = _both_ways(("test small column",), fewer_extra, {"project_id": project.pk, "most": most})
        assert compiled == orm
        assert compiled == [item.pk for item in items_with_extra_labels[:most]] + [
            item.pk for item in project.items.order_by("pk")[4:] if item.extra_labels < most
        ]
    sql, params = compiled_sql.bound_sql(("test small column",), fewer_extra, {"project_id": project.pk, "most": 2})
    assert '"extra_labels" < %s' in sql
    assert params == [2, project.pk]


def test_a_value_no_stand_in_can_bind_is_refused(project):
    """A lookup Django drops for every stand-in (here: a value it never sees) binds nothing: refused, not ignored."""

    def ignores_most(values):
        return Item.objects.filter(project_id=values["project_id"]).order_by("pk")

    with pytest.raises(UnsafeBuilder, match="most: bound to no parameter"):
        compiled_sql.bound_sql(("test unused",), ignores_most, {"project_id": project.pk, "most": 3})


def test_a_branch_on_zero_gets_its_own_shape(project, items_with_extra_labels):
    def maybe_filtered(values):
        query = Item.objects.filter(project_id=values["project_id"]).order_by("pk")
        return query.filter(extra_labels__gte=values["least"]) if values["least"] else query

    for least in (2, 0, 3, 0):
        compiled, orm = _both_ways(("test branch",), maybe_filtered, {"project_id": project.pk, "least": least})
        assert compiled == orm
    assert len(_both_ways(("test branch",), maybe_filtered, {"project_id": project.pk, "least": 0})[0]) > 3


def test_a_branch_on_size_is_caught_when_every_call_is_checked(project, items_with_extra_labels, settings):
    settings.CHECK_COMPILED_SQL = True

    def small_means_everything(values):
        query = Item.objects.filter(project_id=values["project_id"]).order_by("pk")
        return query.filter(pk__gte=values["least"]) if values["least"] >= 100 else query

    # The first call takes the same branch as the stand-ins, so it compiles; the second takes the other.
    compiled_sql.bound_sql(("test size",), small_means_everything, {"project_id": project.pk, "least": 1_000})
    with pytest.raises(UnsafeBuilder, match="not the compiled SQL"):
        compiled_sql.bound_sql(("test size",), small_means_everything, {"project_id": project.pk, "least": 2})


def test_a_first_call_on_the_other_branch_is_refused_even_unchecked(project, settings):
    settings.CHECK_COMPILED_SQL = False

    def small_means_everything(values):
        query = Item.objects.filter(project_id=values["project_id"]).order_by("pk")
        return query if values["least"] < 100 else query.filter(pk__gte=values["least"])

    with pytest.raises(UnsafeBuilder):
        compiled_sql.bound_sql(("test size first",), small_means_everything, {"project_id": project.pk, "least": 2})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"project_id": None}, "project_id: None and flags change a query's shape"),
        ({"project_id": True}, "project_id: None and flags change a query's shape"),
    ],
)
def test_none_and_flags_are_refused_by_name(values, message):
    with pytest.raises(UnsafeBuilder, match=message):
        compiled_sql.bound_sql(
            ("test none",), lambda named: Item.objects.filter(project_id=named["project_id"]), values
        )


def test_a_null_in_a_list_is_refused(project):
    """``NOT IN (1, NULL)`` matches no row at all: the values are refused rather than return nothing."""

    def excluding(values):
        return Item.objects.filter(project_id=values["project_id"]).exclude(pk__in=values["exclude"])

    with pytest.raises(UnsafeBuilder, match="exclude: a list of values may hold only integers"):
        compiled_sql.bound_sql(("test null list",), excluding, {"project_id": project.pk, "exclude": [1, None]})
    first = project.items.order_by("pk").first()
    compiled, orm = _both_ways(("test null list",), excluding, {"project_id": project.pk, "exclude": [first.pk]})
    assert compiled == orm
    assert first.pk not in compiled


def test_negative_values_bind_as_themselves(project):
    def above(values):
        return Item.objects.filter(project_id=values["project_id"], queue_key__gt=values["floor"]).order_by("pk")

    for floor in (-1.5, 0.5, 0.0):
        compiled, orm = _both_ways(("test negative",), above, {"project_id": project.pk, "floor": floor})
        assert compiled == orm
