"""Every hot query compiled once per process gives the ORM's own rows for generated values of every type, sign and
size (lists with repeats, floats where an integer is stored, ids past any row), and never fails a request: where the
cache refuses a shape, the ORM answers (with ``CHECK_COMPILED_SQL`` off, as in production)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.page import home
from annotation.queue import services as claim_services
from annotation.queue.services import assignment_claim_next
from annotation.saving import _own_assignment_query
from config import compiled_sql
from projects import selectors as project_selectors
from projects.models import Item, Project

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the compiled path runs on PostgreSQL only")

ID_MAX = 2**63 - 1
# Ids near real rows, then every size an id column holds (negative and zero included).
ids = st.one_of(st.integers(min_value=-3, max_value=400), st.integers(min_value=-ID_MAX, max_value=ID_MAX))
counts = st.one_of(st.integers(min_value=-2, max_value=6), st.floats(min_value=-2, max_value=6, allow_nan=False))
times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
id_lists = st.lists(st.integers(min_value=0, max_value=400), max_size=6).map(lambda found: found + found[:2])
PROPERTY = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


def _pks(found):
    return [getattr(row, "pk", None) for row in found]


def _agrees(model, key, build, values):
    """The compiled call's rows equal the ORM's, with the refusal path (the ORM) allowed but never an error."""
    with override_settings(CHECK_COMPILED_SQL=False):
        compiled = compiled_sql.rows(model, key, build, values)
    assert _pks(compiled) == _pks(build(values))
    return compiled


@pytest.fixture
def world(project, annotator, annotator2):
    assignment_claim_next(project=project, annotator=annotator2)
    return {"project": project, "annotator": annotator, "items": list(project.items.values_list("pk", flat=True))}


@PROPERTY
@given(offset=ids, annotator_id=ids, now=times, exclude=id_lists, count=counts, room=counts)
def test_the_queue_scan_agrees(world, offset, annotator_id, now, exclude, count, room):
    values = {
        "project_id": world["project"].pk,
        "offset": offset,
        "annotator_id": annotator_id,
        "now": now,
        "exclude": exclude + world["items"][:1],
        "count": count,
        "room": room,
    }
    for key, build in (("upper", claim_services._scan_upper), ("lower", claim_services._scan_lower)):
        _agrees(Item, ("generated scan", key), build, values)


@PROPERTY
@given(project_id=ids, user_id=ids)
def test_the_membership_read_agrees(world, project_id, user_id):
    for values in (
        {"project_id": project_id, "user_id": user_id},
        {"project_id": world["project"].pk, "user_id": user_id},
    ):
        _agrees(Project, ("generated member project",), project_selectors._member_project, values)


@PROPERTY
@given(annotator_id=ids)
def test_the_progress_counts_agree(world, annotator_id):
    found = _agrees(
        Project,
        ("generated progress",),
        home._progress_counts,
        {"project_id": world["project"].pk, "annotator_id": annotator_id},
    )
    assert len(found) == 1


@PROPERTY
@given(item_id=ids, annotator_id=ids, now=times)
def test_the_saves_own_assignment_agrees(world, item_id, annotator_id, now):
    values = {"item_id": item_id, "annotator_id": annotator_id, "project_id": world["project"].pk, "now": now}
    _agrees(Item.assignments.rel.related_model, ("generated own assignment",), _own_assignment_query, values)


def test_an_integer_shape_never_serves_a_float(world):
    """``2`` compiles a shape; ``2.5`` is a shape of its own (its type is in the key) and gets the ORM's rows."""
    values = {"project_id": world["project"].pk, "offset": 0, "annotator_id": world["annotator"].pk}
    values |= {"now": datetime.now(UTC) + timedelta(days=1), "exclude": [], "count": 2, "room": 2}
    for count in (2, 2.5, 2.0, 3):
        _agrees(Item, ("type in key",), claim_services._scan_upper, {**values, "count": count})
    shapes = [shape for shape in compiled_sql._cache if shape[0] == ("type in key",)]
    count_classes = {dict(shape[1:])["count"] for shape in shapes}
    assert ("int", 1) in count_classes
    assert ("float", 1) in count_classes


def test_repeated_ids_compile_like_the_orm(world):
    """The ORM drops repeats from IN (…); a first call with repeats compiles instead of failing."""
    pk = world["items"][0]
    build = lambda values: Item.objects.filter(pk__in=values["ids"]).order_by("pk")  # noqa: E731
    with override_settings(CHECK_COMPILED_SQL=True):
        found = compiled_sql.rows(Item, ("repeats first",), build, {"ids": [pk, pk, pk]})
    assert _pks(found) == [pk]


def test_the_cache_holds_a_bounded_number_of_shapes(world):
    build = lambda values: Item.objects.filter(pk__in=values["ids"]).order_by("pk")  # noqa: E731
    for length in range(1, compiled_sql.CACHE_SHAPES + 40):
        compiled_sql.bound_sql(("many lengths",), build, {"ids": list(range(1, length + 1))})
    assert len(compiled_sql._cache) <= compiled_sql.CACHE_SHAPES
