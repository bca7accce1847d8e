"""Reading from the database into arrays: a project's judgments (:class:`aggregation.figures.judgments.Judgments`), its
stored annotator weights, and the newest annotation per item. One query per table, no per-item loop."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import IntegerField, Max, Value
from django.db.models.functions import Cast, Coalesce

from aggregation.figures.judgments import NO_BINARY, FloatArray, IntArray, Judgments
from aggregation.figures.settings import FigureSettings
from aggregation.maths import ifs
from aggregation.models import AnnotatorAggregate
from annotation.models import Annotation
from projects.models import PERMILLE, Item, Project, Response

NO_GOLD = int(ifs.UNDEFINED)


_LINES_TO_TABS = bytes.maketrans(b"\n", b"\t")


def _copied_int_rows(cursor: Any, sql: str, params: Any, width: int) -> IntArray | None:
    """The query's rows through ``COPY … TO STDOUT`` as text, parsed by numpy in one call (None if some value is
    not a whole number, e.g. a NULL). A project's 600,000 judgments as Python tuples took 0.4 GB at their peak; as
    text they take a tenth of that, and the parse is faster than building the tuples."""
    with connection.wrap_database_errors, cursor.cursor.copy(f"COPY ({sql}) TO STDOUT", params) as copy:
        text = b"".join(bytes(block) for block in copy)
    if not text:
        return np.zeros((0, width), dtype=np.int64)
    values = np.fromstring(text[:-1].translate(_LINES_TO_TABS), dtype=np.int64, sep="\t")
    if values.size != text.count(b"\n") * width:
        return None
    return values.reshape(-1, width)


def _int_rows(queryset: Any, width: int) -> IntArray:
    """Run a ``values_list`` queryset of whole numbers straight into an (n, width) array.

    The ORM's query, executed on the cursor: on PostgreSQL through COPY, elsewhere ``fetchall`` hands numpy plain
    tuples; either way the per-row converters of values_list, which cost more than the maths on a large project,
    are skipped.
    """
    try:
        sql, params = queryset.query.sql_with_params()
    except EmptyResultSet:  # e.g. ``pk__in=[]``: Django knows no row can match
        return np.zeros((0, width), dtype=np.int64)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            copied = _copied_int_rows(cursor, sql, params, width)
            if copied is not None:
                return copied
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return np.array(rows, dtype=np.int64).reshape(-1, width)


def judgments_load(
    *, project: Project, item_ids: Iterable[int] | None = None, settings: FigureSettings | None = None
) -> Judgments:
    """Read the judgments of ``project`` (or of ``item_ids`` in it): one query per table, no per-item loop."""
    items = Item.objects.filter(project_id=project.pk)
    if item_ids is not None:
        items = items.filter(pk__in=sorted({int(i) for i in item_ids}))
    item_rows = _int_rows(items.order_by("pk").values_list("pk", Coalesce("gold_position", Value(NO_GOLD))), 2)
    if item_ids is None:
        responses = Response.objects.filter(item__project_id=project.pk)
        annotations = Annotation.objects.filter(project_id=project.pk)
    else:
        # Only the project's own items (checked above); by item the planner uses the item indexes alone.
        wanted = item_rows[:, 0].tolist()
        responses = Response.objects.filter(item_id__in=wanted)
        annotations = Annotation.objects.filter(item_id__in=wanted)

    item_pk = item_rows[:, 0]
    n_items = item_pk.size

    criteria = list(project.criteria.order_by("position", "pk").values_list("pk", "weight"))
    criterion_pk = np.array([c[0] for c in criteria], dtype=np.int64)
    criterion_weights = np.array([c[1] for c in criteria], dtype=np.float64)
    if criterion_weights.size and criterion_weights.sum() <= 0:
        criterion_weights = np.ones_like(criterion_weights)

    response_rows = _int_rows(responses.values_list("pk", "item_id", "position"), 3)
    response_item = np.searchsorted(item_pk, response_rows[:, 1])
    n_positions = max(2, int(response_rows[:, 2].max(initial=-1)) + 1)
    response_ids = np.zeros((n_items, n_positions), dtype=np.int64)
    response_ids[response_item, response_rows[:, 2]] = response_rows[:, 0]
    n_responses = (response_ids > 0).sum(axis=1).astype(np.int64)

    # Annotations and their values in ONE statement (a LEFT JOIN: one row per value, or one row of NULLs for a
    # binary or Likert label), so one snapshot: read apart, a save committing in between gave values of an
    # annotation the first read did not see (an IndexError during concurrent saves). Same for an item created
    # after the items were read: its annotations are left for the next run.
    joined = _int_rows(
        annotations.values_list(
            "pk",
            "item_id",
            "annotator_id",
            Coalesce("binary_choice", Value(NO_BINARY)),
            Coalesce("likert_value", Value(0)),
            "time_spent_ms",
            Coalesce("values__response_id", Value(-1)),
            Coalesce("values__criterion_id", Value(-1)),
            Coalesce("values__mu", Value(0)),
            Coalesce("values__nu", Value(0)),
            Cast("both_bad", IntegerField()),
        ),
        11,
    )
    joined = joined[np.isin(joined[:, 1], item_pk) & np.isin(joined[:, 6], np.append(response_rows[:, 0], -1))]
    _, first_row = np.unique(joined[:, 0], return_index=True)
    annotation_rows = joined[first_row, :6]
    annotation_both_bad = joined[first_row, 10]
    with_value = joined[:, 6] >= 0
    value_rows = joined[with_value][:, [0, 6, 7, 8, 9]]
    item_index = np.searchsorted(item_pk, annotation_rows[:, 1])
    order = np.lexsort((annotation_rows[:, 2], item_index))
    annotation_rows = annotation_rows[order]
    annotation_both_bad = annotation_both_bad[order]
    item_index = item_index[order]
    # Slot = rank of the annotation within its item: position minus the item's first position in sorted order.
    slot = np.arange(item_index.size) - np.searchsorted(item_index, item_index, side="left")
    n_slots = int(slot.max(initial=-1)) + 1
    annotator_pk, annotator_index = np.unique(annotation_rows[:, 2], return_inverse=True)
    annotator_index = annotator_index.astype(np.int64).ravel()

    slot_annotator = np.full((n_items, n_slots), -1, dtype=np.int64)
    slot_annotator[item_index, slot] = annotator_index
    binary = np.full((n_items, n_slots), np.nan)
    has_binary = annotation_rows[:, 3] != NO_BINARY
    binary[item_index[has_binary], slot[has_binary]] = annotation_rows[has_binary, 3]
    likert = np.full((n_items, n_slots), np.nan)
    has_likert = annotation_rows[:, 4] > 0
    likert[item_index[has_likert], slot[has_likert]] = annotation_rows[has_likert, 4]
    both_bad = np.zeros((n_items, n_slots), dtype=bool)
    both_bad[item_index, slot] = annotation_both_bad == 1

    shape = (n_items, n_positions, criterion_pk.size, n_slots)
    mu = np.zeros(shape)
    nu = np.zeros(shape)
    present = np.zeros(shape, dtype=bool)
    if value_rows.size and n_slots:
        by_annotation = np.argsort(annotation_rows[:, 0])
        row = by_annotation[np.searchsorted(annotation_rows[by_annotation, 0], value_rows[:, 0])]
        by_response = np.argsort(response_rows[:, 0])
        response_row = by_response[np.searchsorted(response_rows[by_response, 0], value_rows[:, 1])]
        criterion_order = np.argsort(criterion_pk)
        found = np.searchsorted(criterion_pk[criterion_order], value_rows[:, 2])
        found = np.minimum(found, criterion_pk.size - 1)
        criterion_index = criterion_order[found]
        known = criterion_pk[criterion_index] == value_rows[:, 2]
        at = (
            item_index[row][known],
            response_rows[response_row, 2][known],
            criterion_index[known],
            slot[row][known],
        )
        mu[at] = value_rows[known, 3] / PERMILLE
        nu[at] = value_rows[known, 4] / PERMILLE
        present[at] = True

    return Judgments(
        settings=settings or FigureSettings.of(project),
        item_ids=item_pk,
        gold=item_rows[:, 1],
        n_responses=n_responses,
        response_ids=response_ids,
        criterion_ids=criterion_pk,
        criterion_weights=criterion_weights,
        annotator_ids=annotator_pk.astype(np.int64),
        annotation_ids=annotation_rows[:, 0],
        annotation_item=item_index,
        annotation_annotator=annotator_index,
        annotation_slot=slot,
        time_spent_ms=annotation_rows[:, 5],
        mu=mu,
        nu=nu,
        present=present,
        slot_annotator=slot_annotator,
        binary=binary,
        likert=likert,
        both_bad=both_bad,
    )


def stored_weights(project_id: int, annotator_ids: IntArray) -> FloatArray:
    """Annotator weights from AnnotatorAggregate; annotators without one get the mean of the others (neutral)."""
    stored = dict(
        AnnotatorAggregate.objects.filter(project_id=project_id, annotator_id__in=annotator_ids.tolist()).values_list(
            "annotator_id", "weight"
        )
    )
    if not stored:
        return np.ones(annotator_ids.size)
    fill = float(np.mean(list(stored.values())))
    return np.array([stored.get(int(a), fill) for a in annotator_ids], dtype=np.float64)


def newest_annotation_by_item(project_id: int, item_ids: Iterable[int] | None) -> dict[int, dt.datetime]:
    annotations = Annotation.objects.filter(project_id=project_id)
    if item_ids is not None:
        annotations = annotations.filter(item_id__in=sorted({int(i) for i in item_ids}))
    return dict(
        annotations.order_by().values("item_id").annotate(newest=Max("updated_at")).values_list("item_id", "newest")
    )


def newest_annotation(project_id: int) -> Any:
    return Annotation.objects.filter(project_id=project_id).aggregate(newest=Max("updated_at"))["newest"]
