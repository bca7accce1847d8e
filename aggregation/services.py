"""Recompute a project's aggregates from its judgments: read in bulk, run the numpy maths, upsert the results.

Each service reads one query per table (``values_list`` into numpy arrays), computes over whole arrays and writes
with ``bulk_create(update_conflicts=True)`` in batches (response rows: delete and insert per item chunk in the same
transaction, see ResponseAggregate), so running it twice leaves the same rows (idempotent) and any number of
workers may run it. On PostgreSQL, writes of a whole project (COPY_THRESHOLD rows or more) go through COPY: the
same upsert (a temporary table and INSERT … ON CONFLICT), an order of magnitude faster than building model
instances. The maths lives in :mod:`aggregation.ifs`, :mod:`aggregation.agreement` and
:mod:`aggregation.weights`; this module only moves data between the database and arrays.

Layout of the arrays read by :func:`judgments_load`: items on axis 0, responses by stored position on axis 1,
criteria on axis 2 and annotator *slots* on the last axis: slot k of an item is its k-th annotation (by annotator
id), so the last axis is as long as the most annotations on any item, not as long as the project's annotator list.
``slot_annotator`` says which annotator fills each slot; weights are spread onto slots from it.

Modes. IFS annotations aggregate as IFS values. Binary and Likert annotations are projected onto the signed
preference s ∈ [−1, 1] (+1 = position 0 preferred; see :mod:`aggregation.agreement`) and their headline figures
come from pseudo-scores S₀ = s̄, S₁ = −s̄ (binary items with more than two responses: S_r = 2·share_r − 1 with
ties shared equally), so p_best = 0.5 + |s̄|/2 and margin = 2|s̄| mean the same as for IFS, where s = (S₀ − S₁)/2.
We chose NOT to invent IFS values for them: their ResponseAggregate rows and hesitation stay empty, because a
click carries no hesitation and a made-up (1, 0)/(0, 1) would read as full certainty. Their item agreement is the
share of pairs of annotators with the same preference (choice, or sign of s), and ``vote_tie`` says when the
unweighted votes split evenly (the weighted s̄ may still lean one way). Only the annotator weights use a degenerate
IFS for them (response 0: (max(s, 0), max(−s, 0)), response 1 mirrored), so that leave-one-out agreement and gold
accuracy have something to measure.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet
from django.db import connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone
from numpy.typing import NDArray

from aggregation import adaptive_services, ifs, study_figures
from aggregation import agreement as agreement_maths
from aggregation import weights as weights_maths
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.models import Annotation, Assignment
from config import events
from projects.models import PERMILLE, TIE, Item, Project, Response

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: Rows per INSERT statement, and items per chunk of built model instances (memory stays flat on big projects).
BATCH_SIZE = 2000
ITEM_CHUNK = 5000
#: Bootstrap replicates for the project's agreement intervals: N_BOOT up to BOOT_FULL_UNITS items, then fewer
#: (never under N_BOOT_MIN) so the work stays flat; on that many items the interval is narrow and 200 replicates
#: place its ends to within a small fraction of its width.
N_BOOT = 1000
N_BOOT_MIN = 200
BOOT_FULL_UNITS = 20_000


def _n_boot(n_units: int) -> int:
    return max(N_BOOT_MIN, min(N_BOOT, N_BOOT * BOOT_FULL_UNITS // max(n_units, 1)))


#: Points on the agreement-over-time plot (days; evenly thinned when there are more).
TIME_POINTS = 30
HESITATION_BINS = 10

_NO_GOLD = int(ifs.UNDEFINED)
_NO_BINARY = -99


@dataclass
class Judgments:
    """A project's (or some items') judgments as arrays; see the module docstring for the layout."""

    project: Project
    item_ids: IntArray  # (I,) sorted
    gold: IntArray  # (I,) gold position, TIE, or ifs.UNDEFINED
    n_responses: IntArray  # (I,)
    response_ids: IntArray  # (I, R), 0 where the item has no response at that position
    criterion_ids: IntArray  # (C,) in the project's order
    criterion_weights: FloatArray  # (C,)
    annotator_ids: IntArray  # (A,) sorted
    annotation_ids: IntArray  # (N,) sorted by (item, annotator)
    annotation_item: IntArray  # (N,) item index
    annotation_annotator: IntArray  # (N,) annotator index
    annotation_slot: IntArray  # (N,)
    time_spent_ms: IntArray  # (N,)
    mu: FloatArray  # (I, R, C, K) in [0, 1]
    nu: FloatArray
    present: BoolArray
    slot_annotator: IntArray  # (I, K), −1 where empty
    binary: FloatArray  # (I, K) choice, NaN where none
    likert: FloatArray  # (I, K) value, NaN where none

    @property
    def slot_present(self) -> BoolArray:
        return np.asarray(self.slot_annotator >= 0)

    @property
    def n_annotators(self) -> IntArray:
        return np.asarray(self.slot_present.sum(axis=1), dtype=np.int64)


def _int_rows(queryset: Any, width: int) -> IntArray:
    """Run a ``values_list`` queryset of whole numbers straight into an (n, width) array.

    The ORM's query, executed on the cursor: ``fetchall`` hands numpy plain tuples, skipping the per-row
    converters of values_list, which cost more than the maths on a large project.
    """
    try:
        sql, params = queryset.query.sql_with_params()
    except EmptyResultSet:  # e.g. ``pk__in=[]``: Django knows no row can match
        return np.zeros((0, width), dtype=np.int64)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return np.array(rows, dtype=np.int64).reshape(-1, width)


def judgments_load(*, project: Project, item_ids: Iterable[int] | None = None) -> Judgments:
    """Read the judgments of ``project`` (or of ``item_ids`` in it): one query per table, no per-item loop."""
    items = Item.objects.filter(project_id=project.pk)
    if item_ids is not None:
        items = items.filter(pk__in=sorted({int(i) for i in item_ids}))
    item_rows = _int_rows(items.order_by("pk").values_list("pk", Coalesce("gold_position", Value(_NO_GOLD))), 2)
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
            Coalesce("binary_choice", Value(_NO_BINARY)),
            Coalesce("likert_value", Value(0)),
            "time_spent_ms",
            Coalesce("values__response_id", Value(-1)),
            Coalesce("values__criterion_id", Value(-1)),
            Coalesce("values__mu", Value(0)),
            Coalesce("values__nu", Value(0)),
        ),
        10,
    )
    joined = joined[np.isin(joined[:, 1], item_pk) & np.isin(joined[:, 6], np.append(response_rows[:, 0], -1))]
    _, first_row = np.unique(joined[:, 0], return_index=True)
    annotation_rows = joined[first_row, :6]
    with_value = joined[:, 6] >= 0
    value_rows = joined[with_value][:, [0, 6, 7, 8, 9]]
    item_index = np.searchsorted(item_pk, annotation_rows[:, 1])
    order = np.lexsort((annotation_rows[:, 2], item_index))
    annotation_rows = annotation_rows[order]
    item_index = item_index[order]
    # Slot = rank of the annotation within its item: position minus the item's first position in sorted order.
    slot = np.arange(item_index.size) - np.searchsorted(item_index, item_index, side="left")
    n_slots = int(slot.max(initial=-1)) + 1
    annotator_pk, annotator_index = np.unique(annotation_rows[:, 2], return_inverse=True)
    annotator_index = annotator_index.astype(np.int64).ravel()

    slot_annotator = np.full((n_items, n_slots), -1, dtype=np.int64)
    slot_annotator[item_index, slot] = annotator_index
    binary = np.full((n_items, n_slots), np.nan)
    has_binary = annotation_rows[:, 3] != _NO_BINARY
    binary[item_index[has_binary], slot[has_binary]] = annotation_rows[has_binary, 3]
    likert = np.full((n_items, n_slots), np.nan)
    has_likert = annotation_rows[:, 4] > 0
    likert[item_index[has_likert], slot[has_likert]] = annotation_rows[has_likert, 4]

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
        project=project,
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
    )


# --------------------------------------------------------------------------------------------------------------
# Shared pieces of maths on the slot layout


def signed_preferences(data: Judgments) -> FloatArray:
    """s ∈ [−1, 1] per (item, slot), NaN where undefined: from IFS values when the annotation has them, else from
    the binary choice, else from the Likert value. Only items with exactly two responses get one."""
    n_items, n_slots = data.slot_annotator.shape
    s = np.full((n_items, n_slots), np.nan)
    if n_slots == 0:
        return s
    binary_ok = np.isin(data.binary, (0.0, 1.0, float(TIE)))
    s = np.where(binary_ok, agreement_maths.signed_preference_binary(np.nan_to_num(data.binary), binary_ok), s)
    points = int(data.project.likert_points)
    likert_ok = ~np.isnan(data.likert) & (data.likert >= 1) & (data.likert <= points)
    s = np.where(
        likert_ok & np.isnan(s),
        agreement_maths.signed_preference_likert(np.nan_to_num(data.likert, nan=1.0), points, likert_ok),
        s,
    )
    if data.criterion_ids.size and data.present.any():
        pair = data.present[:, :2]
        ifs_s = agreement_maths.signed_preference_ifs(data.mu[:, :2], data.nu[:, :2], data.criterion_weights, mask=pair)
        s = np.where(np.isnan(ifs_s), s, ifs_s)
    s[data.n_responses != 2] = np.nan
    return s


def _slot_weights(data: Judgments, annotator_weight: FloatArray) -> FloatArray:
    """Weights per (item, slot); an item whose annotators all weigh zero falls back to equal weights."""
    slot_present = data.slot_present
    weight = np.where(slot_present, annotator_weight[np.maximum(data.slot_annotator, 0)], 0.0)
    unweighted = (weight.sum(axis=1) <= 0.0) & slot_present.any(axis=1)
    weight[unweighted] = slot_present[unweighted]
    return np.asarray(weight, dtype=np.float64)


def _stored_weights(project: Project, annotator_ids: IntArray) -> FloatArray:
    """Annotator weights from AnnotatorAggregate; annotators without one get the mean of the others (neutral)."""
    stored = dict(
        AnnotatorAggregate.objects.filter(project_id=project.pk, annotator_id__in=annotator_ids.tolist()).values_list(
            "annotator_id", "weight"
        )
    )
    if not stored:
        return np.ones(annotator_ids.size)
    fill = float(np.mean(list(stored.values())))
    return np.array([stored.get(int(a), fill) for a in annotator_ids], dtype=np.float64)


def _best_and_worst(scores: FloatArray, exists: BoolArray, tolerance: float) -> tuple[IntArray, IntArray, FloatArray]:
    """Best and worst positions (TIE within tolerance, UNDEFINED if a score is missing) and S_best − S_worst."""
    high = np.where(exists, scores, -np.inf)
    low = np.where(exists, -scores, -np.inf)
    best = ifs.preferred_response(high, tolerance)
    worst = ifs.preferred_response(low, tolerance)
    with np.errstate(invalid="ignore"):
        spread = np.where(exists, scores, -np.inf).max(axis=1) - np.where(exists, scores, np.inf).min(axis=1)
    spread = np.where(best == ifs.UNDEFINED, np.nan, spread)
    return best, worst, spread


def _optional(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _position(x: int) -> int | None:
    return None if x == ifs.UNDEFINED else int(x)


# --------------------------------------------------------------------------------------------------------------
# Items


@dataclass
class ItemFigures:
    """Per item headline figures (I,) and per operator the aggregated values (I, R, C) and overall (I, R)."""

    best: IntArray
    worst: IntArray
    p_best: FloatArray
    margin: FloatArray
    hesitation: FloatArray
    agreement: FloatArray
    signed_preference: FloatArray
    vote_tie: BoolArray
    by_operator: dict[str, tuple[ifs.IFS, ifs.IFS]]


def item_figures_compute(data: Judgments, annotator_weight: FloatArray) -> ItemFigures:
    """All item figures for every operator, vectorised over the items of ``data``."""
    project = data.project
    slot_weight = _slot_weights(data, annotator_weight)
    entry_weight = slot_weight[:, None, None, :]
    exists = data.response_ids > 0
    n_items, n_positions = exists.shape

    by_operator: dict[str, tuple[ifs.IFS, ifs.IFS]] = {}
    has_ifs = np.asarray(data.present.any(axis=(1, 2, 3)) if data.present.size else np.zeros(n_items), dtype=bool)
    if has_ifs.any():
        for operator in ifs.OPERATORS:
            per_criterion = ifs.aggregate(data.mu, data.nu, operator, w=entry_weight, mask=data.present)
            overall = ifs.combine_criteria(per_criterion.mu, per_criterion.nu, data.criterion_weights, axis=-1)
            by_operator[operator] = (per_criterion, overall)
        _, overall = by_operator[project.aggregation_operator]
        ifs_scores = ifs.score(overall.mu, overall.nu)
        pi = 1.0 - data.mu - data.nu
        counts = data.present.sum(axis=(1, 2, 3))
        with np.errstate(invalid="ignore", divide="ignore"):
            hesitation = np.where(data.present, pi, 0.0).sum(axis=(1, 2, 3)) / counts
        agreement = ifs.ifs_agreement(data.mu, data.nu, data.present)
    else:
        ifs_scores = np.full((n_items, n_positions), np.nan)
        hesitation = np.full(n_items, np.nan)
        agreement = np.full(n_items, np.nan)

    s = signed_preferences(data)
    s_present = ~np.isnan(s)
    s_weight = np.where(s_present, slot_weight, 0.0)
    s_total = s_weight.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = (np.where(s_present, s, 0.0) * s_weight).sum(axis=1) / s_total
    mean_s = np.where(s_total > 0, mean_s, np.nan)

    # Pseudo-scores for items judged without sliders (see the module docstring).
    pseudo = np.full((n_items, n_positions), np.nan)
    pseudo[:, 0] = mean_s
    pseudo[:, 1] = -mean_s
    binary_ok = ~np.isnan(data.binary)
    if binary_ok.any() and n_positions > 2:
        choice = np.where(binary_ok, data.binary, _NO_BINARY)
        weight = np.where(binary_ok, slot_weight, 0.0)
        one_hot = (choice[:, :, None] == np.arange(n_positions)[None, None, :]).astype(np.float64)
        one_hot += (choice == TIE)[:, :, None] / np.maximum(data.n_responses, 1)[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = (one_hot * weight[:, :, None]).sum(axis=1) / weight.sum(axis=1)[:, None]
        many = (data.n_responses > 2) & (weight.sum(axis=1) > 0)
        pseudo[many] = 2.0 * share[many] - 1.0
    scores = np.where(has_ifs[:, None], ifs_scores, pseudo)

    best, worst, spread = _best_and_worst(scores, exists, project.tie_tolerance)
    vote_agreement, vote_tie = _vote_figures(data, s, has_ifs)
    return ItemFigures(
        best=best,
        worst=worst,
        p_best=0.5 + spread / 4.0,
        margin=spread,
        hesitation=hesitation,
        agreement=np.where(has_ifs, agreement, vote_agreement),
        signed_preference=mean_s,
        vote_tie=vote_tie,
        by_operator=by_operator,
    )


def _vote_figures(data: Judgments, s: FloatArray, has_ifs: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Agreement and vote ties of items judged without sliders (binary, Likert), from unweighted votes.

    Labels: the binary choice (a response position, or TIE), else the sign of s with the tie band τ/2 (the band of
    the project's cross-mode figures). Agreement is the share of pairs of annotators with the same label, a tie
    being a label of its own (NaN below two labels). The votes tie when no response has more votes than every other
    (votes for "tie" count for none): then annotator weights alone would pick a winner, and exports say so.
    """
    n_items, n_positions = data.response_ids.shape
    signs = agreement_maths.preference_sign(s, data.project.tie_tolerance / 2)
    labels = np.where(np.isnan(data.binary), signs, data.binary)
    labels = np.where(data.slot_present, labels, np.nan)
    agreement = agreement_maths.pairwise_agreement_per_unit(labels, ~np.isnan(labels))
    votes = np.zeros((n_items, n_positions))
    if labels.size:
        # A binary choice names a position; a sign names position 0 (+1) or 1 (−1).
        position = np.where(np.isnan(data.binary), np.where(signs > 0, 0.0, np.where(signs < 0, 1.0, np.nan)), labels)
        votes = (position[:, :, None] == np.arange(n_positions)[None, None, :]).sum(axis=1).astype(np.float64)
    top = votes.max(axis=1, initial=0.0)
    shared_top = ((votes == top[:, None]) & (data.response_ids > 0)).sum(axis=1) >= 2
    vote_tie = ~has_ifs & (data.n_annotators > 0) & shared_top
    return np.where(has_ifs, np.nan, agreement), np.asarray(vote_tie, dtype=bool)


def _newest_annotation_by_item(project: Project, item_ids: Iterable[int] | None) -> dict[int, dt.datetime]:
    annotations = Annotation.objects.filter(project_id=project.pk)
    if item_ids is not None:
        annotations = annotations.filter(item_id__in=sorted({int(i) for i in item_ids}))
    return dict(
        annotations.order_by().values("item_id").annotate(newest=Max("updated_at")).values_list("item_id", "newest")
    )


RESPONSE_COLUMNS = ("item_id", "response_id", "criterion_id", "operator", "mu", "nu")
ITEM_COLUMNS = (
    "project_id",
    "item_id",
    "provenance",
    "operator",
    "best_position",
    "worst_position",
    "p_best",
    "margin",
    "hesitation",
    "agreement",
    "signed_preference",
    "vote_tie",
    "n_annotators",
    "source_updated_at",
    "settings_version",
    "computed_at",
)
#: From this many response rows on, PostgreSQL writes go through COPY and a merge (a whole project); fewer (a
#: save) use bulk_create.
COPY_THRESHOLD = 1000


def _response_rows(data: Judgments, figures: ItemFigures, items: IntArray) -> list[tuple[Any, ...]]:
    """Rows (RESPONSE_COLUMNS) for the item indices ``items``: per operator, each criterion and overall."""
    rows: list[tuple[Any, ...]] = []
    response_ids = data.response_ids[items]
    item_pks = data.item_ids[items]
    for operator, (per_criterion, overall) in figures.by_operator.items():
        for c, criterion_id in enumerate([*data.criterion_ids.tolist(), None]):
            if criterion_id is None:
                mu, nu = overall.mu[items], overall.nu[items]
            else:
                mu, nu = per_criterion.mu[items, :, c], per_criterion.nu[items, :, c]
            keep = (response_ids > 0) & np.isfinite(mu) & np.isfinite(nu)
            i, r = np.nonzero(keep)
            mu_k = np.clip(mu[i, r], 0.0, 1.0)
            nu_k = np.clip(np.minimum(nu[i, r], 1.0 - mu_k), 0.0, 1.0)
            rows.extend(
                (item_id, response_id, criterion_id, operator, m, n)
                for item_id, response_id, m, n in zip(
                    item_pks[i].tolist(), response_ids[i, r].tolist(), mu_k.tolist(), nu_k.tolist(), strict=True
                )
            )
    return rows


def _copy_into(table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    quoted = ", ".join(f'"{c}"' for c in columns)
    with connection.cursor() as cursor, cursor.cursor.copy(f'COPY "{table}" ({quoted}) FROM STDIN') as copy:
        for row in rows:
            copy.write_row(row)


class _OrmWriter:
    """Writes each chunk at once with the ORM: bulk_create(update_conflicts=True) for items; for response rows,
    which ON CONFLICT cannot target (two partial unique constraints: per criterion, and overall with criterion
    NULL), the chunk's rows are replaced (delete, insert) inside the caller's transaction. Any database."""

    def add(self, item_rows: list[tuple[Any, ...]], response_rows: list[tuple[Any, ...]], item_ids: list[int]) -> None:
        ItemAggregate.objects.bulk_create(
            [ItemAggregate(**dict(zip(ITEM_COLUMNS, row, strict=True))) for row in item_rows],
            batch_size=BATCH_SIZE,
            update_conflicts=True,
            unique_fields=["item"],
            update_fields=[c.removesuffix("_id") for c in ITEM_COLUMNS if c != "item_id"],
        )
        ResponseAggregate.objects.filter(item_id__in=item_ids).delete()
        ResponseAggregate.objects.bulk_create(
            [
                ResponseAggregate(item_id=i, response_id=r, criterion_id=c, operator=o, mu=m, nu=n)
                for i, r, c, o, m, n in response_rows
            ],
            batch_size=BATCH_SIZE,
        )

    def finish(self) -> None:
        return None


class _PostgresMerge:
    """Whole-project writes on PostgreSQL: chunks are COPied into temporary tables, then merged in a few
    set-based statements. Items: INSERT … ON CONFLICT (item_id) DO UPDATE. Response rows: cells that vanished are
    deleted, changed values updated, new cells inserted; unchanged rows are not written at all, so recomputing a
    project after a small weight change touches little. Same result as _OrmWriter, an order of magnitude faster."""

    def __init__(self) -> None:
        item_columns = ", ".join(f'"{c}"' for c in ITEM_COLUMNS)
        response_columns = ", ".join(f'"{c}"' for c in RESPONSE_COLUMNS)
        with connection.cursor() as cursor:
            for name in ("item_aggregate_incoming", "response_aggregate_incoming"):
                cursor.execute(f"DROP TABLE IF EXISTS pg_temp.{name}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE item_aggregate_incoming ON COMMIT DROP AS SELECT {item_columns} "
                f'FROM "{ItemAggregate._meta.db_table}" WITH NO DATA'
            )
            cursor.execute(
                f"CREATE TEMPORARY TABLE response_aggregate_incoming ON COMMIT DROP AS SELECT {response_columns} "
                f'FROM "{ResponseAggregate._meta.db_table}" WITH NO DATA'
            )

    def add(self, item_rows: list[tuple[Any, ...]], response_rows: list[tuple[Any, ...]], item_ids: list[int]) -> None:
        _copy_into("item_aggregate_incoming", ITEM_COLUMNS, item_rows)
        _copy_into("response_aggregate_incoming", RESPONSE_COLUMNS, response_rows)

    def finish(self) -> None:
        items = ItemAggregate._meta.db_table
        responses = ResponseAggregate._meta.db_table
        item_columns = ", ".join(f'"{c}"' for c in ITEM_COLUMNS)
        response_columns = ", ".join(f'"{c}"' for c in RESPONSE_COLUMNS)
        updates = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in ITEM_COLUMNS if c != "item_id")
        # Equality on COALESCE keeps the joins hashable (an OR of NULL cases would make them nested loops).
        same_cell = (
            "a.response_id = t.response_id AND a.operator = t.operator "
            "AND COALESCE(a.criterion_id, 0) = COALESCE(t.criterion_id, 0)"
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE item_aggregate_incoming")
            cursor.execute("ANALYZE response_aggregate_incoming")
            # Every join here is between large sets; a nested loop (chosen on stale statistics, e.g. a table
            # analysed while empty) would rescan the target per row. Hash joins only, for this transaction.
            cursor.execute("SET LOCAL enable_nestloop = off")
            cursor.execute(
                f'INSERT INTO "{items}" ({item_columns}) SELECT {item_columns} FROM item_aggregate_incoming '
                f'ON CONFLICT ("item_id") DO UPDATE SET {updates}'
            )
            cursor.execute(
                f'DELETE FROM "{responses}" a USING item_aggregate_incoming i WHERE a.item_id = i.item_id '
                f"AND NOT EXISTS (SELECT 1 FROM response_aggregate_incoming t WHERE {same_cell})"
            )
            cursor.execute(
                f'UPDATE "{responses}" a SET mu = t.mu, nu = t.nu, item_id = t.item_id '
                f"FROM response_aggregate_incoming t WHERE {same_cell} "
                "AND (a.mu, a.nu, a.item_id) IS DISTINCT FROM (t.mu, t.nu, t.item_id)"
            )
            # New cells are found before any is inserted: an anti-join against the table being filled would
            # scan the fresh pages again for every row.
            cursor.execute("DROP TABLE IF EXISTS pg_temp.response_aggregate_new")
            cursor.execute(
                f"CREATE TEMPORARY TABLE response_aggregate_new ON COMMIT DROP AS SELECT {response_columns} "
                f'FROM response_aggregate_incoming t WHERE NOT EXISTS (SELECT 1 FROM "{responses}" a WHERE {same_cell})'
            )
            # ON CONFLICT covers a concurrent writer that inserted the same cell meanwhile.
            cursor.execute(
                f'INSERT INTO "{responses}" ({response_columns}) SELECT {response_columns} '
                "FROM response_aggregate_new ON CONFLICT DO NOTHING"
            )
            cursor.execute("RESET enable_nestloop")
            cursor.execute("DROP TABLE pg_temp.response_aggregate_new")
            cursor.execute("DROP TABLE pg_temp.item_aggregate_incoming")
            cursor.execute("DROP TABLE pg_temp.response_aggregate_incoming")


@transaction.atomic
def item_aggregates_recompute(
    *, project_id: int, item_ids: Iterable[int] | None = None, phase_seconds: dict[str, float] | None = None
) -> int:
    """Recompute ItemAggregate and ResponseAggregate rows of a project's items (all of them when ``item_ids`` is
    None) with the stored annotator weights; returns how many items got an aggregate.

    Rules:
    - An item with at least one annotation gets a human aggregate (provenance ``human``), replacing whatever was
      there, including a ``model_handoff`` one: human labels always win over the LLM.
    - An item without annotations is never written here. Its ``model_handoff`` aggregate (the handoff service
      writes those while the project is handed off) is left alone; a stale ``human`` aggregate (its annotations
      were deleted) is removed with its response rows.
    - ResponseAggregate rows are written for IFS judgments only, for every operator, per criterion and overall
      (criterion NULL); the ItemAggregate headline uses the project's operator.

    ``phase_seconds``, when given, receives the time spent reading, computing and writing (for benchmarks).
    """
    project = Project.objects.get(pk=project_id)
    wanted = None if item_ids is None else sorted({int(i) for i in item_ids})
    # Read the newest timestamps first: an annotation saved while we compute is then newer than what we record,
    # and reconciliation picks it up.
    started = time.perf_counter()
    newest = _newest_annotation_by_item(project, wanted)
    data = judgments_load(project=project, item_ids=wanted)
    weights = _stored_weights(project, data.annotator_ids)
    read = time.perf_counter()
    figures = item_figures_compute(data, weights)
    computed = time.perf_counter()
    now = timezone.now()

    labelled = np.nonzero(data.n_annotators > 0)[0]
    unlabelled = data.item_ids[data.n_annotators == 0].tolist()
    _stale_human_aggregates_delete(project_id=project.pk, item_ids=None if wanted is None else unlabelled)

    n_annotators = data.n_annotators
    cells_per_item = data.response_ids.shape[1] * (data.criterion_ids.size + 1) * len(ifs.OPERATORS)
    use_copy = connection.vendor == "postgresql" and labelled.size * cells_per_item >= COPY_THRESHOLD
    writer: _OrmWriter | _PostgresMerge = _PostgresMerge() if use_copy else _OrmWriter()
    for start in range(0, labelled.size, ITEM_CHUNK):
        chunk = labelled[start : start + ITEM_CHUNK]
        chunk_ids = data.item_ids[chunk].tolist()
        item_rows = [
            (
                project.pk,
                item_id,
                Provenance.HUMAN.value,
                project.aggregation_operator,
                _position(best),
                _position(worst),
                _optional(p_best),
                _optional(margin),
                _optional(hesitation),
                _optional(agreement),
                _optional(signed),
                vote_tie,
                count,
                newest.get(item_id),
                project.settings_version,
                now,
            )
            for item_id, best, worst, p_best, margin, hesitation, agreement, signed, vote_tie, count in zip(
                chunk_ids,
                figures.best[chunk].tolist(),
                figures.worst[chunk].tolist(),
                figures.p_best[chunk].tolist(),
                figures.margin[chunk].tolist(),
                figures.hesitation[chunk].tolist(),
                figures.agreement[chunk].tolist(),
                figures.signed_preference[chunk].tolist(),
                figures.vote_tie[chunk].tolist(),
                n_annotators[chunk].tolist(),
                strict=True,
            )
        ]
        writer.add(item_rows, _response_rows(data, figures, chunk), chunk_ids)
    writer.finish()
    if phase_seconds is not None:
        phase_seconds.update(read=read - started, maths=computed - read, write=time.perf_counter() - computed)
    return int(labelled.size)


def _stale_human_aggregates_delete(*, project_id: int, item_ids: list[int] | None) -> None:
    """Remove human aggregates of items that no longer have any annotation (None: look over the whole project)."""
    if item_ids is not None and not item_ids:
        return
    has_annotation = Exists(Annotation.objects.filter(item_id=OuterRef("item_id")))
    stale = ItemAggregate.objects.filter(project_id=project_id, provenance=Provenance.HUMAN).exclude(has_annotation)
    orphans = ResponseAggregate.objects.filter(item__project_id=project_id).exclude(has_annotation)
    orphans = orphans.exclude(item__aggregate__provenance=Provenance.MODEL_HANDOFF)
    if item_ids is not None:
        stale = stale.filter(item_id__in=item_ids)
        orphans = orphans.filter(item_id__in=item_ids)
    orphans.delete()
    stale.delete()


# --------------------------------------------------------------------------------------------------------------
# Annotators


def _annotator_layout(data: Judgments) -> tuple[FloatArray, FloatArray, BoolArray, FloatArray]:
    """(I, R, C, A) arrays over the project's annotators, as aggregation.weights needs them, and criterion weights.

    Projects without slider values get the degenerate IFS of their signed preferences (module docstring).
    """
    n_items = data.slot_annotator.shape[0]
    n_annotators = data.annotator_ids.size
    items, slots = np.nonzero(data.slot_present)
    annotators = data.slot_annotator[items, slots]
    if data.present.any():
        n_positions, n_criteria = data.mu.shape[1], data.mu.shape[2]
        shape = (n_items, n_positions, n_criteria, n_annotators)
        mu, nu, present = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
        mu[items, :, :, annotators] = data.mu[items, :, :, slots]
        nu[items, :, :, annotators] = data.nu[items, :, :, slots]
        present[items, :, :, annotators] = data.present[items, :, :, slots]
        return mu, nu, present, data.criterion_weights
    s = signed_preferences(data)
    shape = (n_items, 2, 1, n_annotators)
    mu, nu, present = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    value = s[items, slots]
    known = ~np.isnan(value)
    items, annotators, value = items[known], annotators[known], value[known]
    mu[items, 0, 0, annotators] = np.maximum(value, 0.0)
    nu[items, 0, 0, annotators] = np.maximum(-value, 0.0)
    mu[items, 1, 0, annotators] = np.maximum(-value, 0.0)
    nu[items, 1, 0, annotators] = np.maximum(value, 0.0)
    present[items, :, 0, annotators] = True
    return mu, nu, present, np.ones(1)


def _coefficients(project: Project) -> tuple[float, float, float]:
    raw = np.array([project.weight_consistency, project.weight_expertise, project.weight_agreement], dtype=float)
    if not np.all(np.isfinite(raw)) or raw.sum() <= 0:
        return weights_maths.DEFAULT_COEFFICIENTS
    raw = raw / raw.sum()
    return float(raw[0]), float(raw[1]), float(raw[2])


def _per_annotator_median(group: IntArray, values: IntArray, n_groups: int) -> FloatArray:
    order = np.lexsort((values, group))
    sorted_values = values[order].astype(np.float64)
    counts = np.bincount(group, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    medians = np.full(n_groups, np.nan)
    has = counts > 0
    low = starts[has] + (counts[has] - 1) // 2
    high = starts[has] + counts[has] // 2
    medians[has] = 0.5 * (sorted_values[low] + sorted_values[high])
    return medians


@transaction.atomic
def annotator_aggregates_recompute(*, project_id: int) -> bool:
    """Recompute every annotator's weight (paper Eq. 8 with the project's coefficients), its parts, the iterative
    consensus weight and working figures; returns True when the weights moved (an annotator appeared or left, or
    a weight changed by more than WEIGHT_CHANGE_TOLERANCE of the largest).

    Consistency comes from the annotator's answered repeats (annotation.models.Repeat: the same item shown to them
    again, unannounced; revisions are corrections, not repeats); without repeats it is stored empty and Eq. 8
    renormalises its coefficient away (see aggregation.weights). The hesitation-variance proxy is not used, so no
    quality score is built from hesitation. The study figures (aggregation.study_figures) are stored here too, from
    the same arrays. ``weight`` is normalised to sum 1 over the project's annotators.
    """
    project = Project.objects.get(pk=project_id)
    data = judgments_load(project=project)
    before = dict(AnnotatorAggregate.objects.filter(project_id=project.pk).values_list("annotator_id", "weight"))
    n_annotators = data.annotator_ids.size
    now = timezone.now()
    if n_annotators == 0:
        AnnotatorAggregate.objects.filter(project_id=project.pk).delete()
        return bool(before)

    mu, nu, present, criterion_weights = _annotator_layout(data)
    repeats = study_figures.repeat_layout(data=data, shape=mu.shape)
    eq8 = weights_maths.annotator_weights(
        mu,
        nu,
        present,
        coefficients=_coefficients(project),
        gold=data.gold,
        criterion_weights=criterion_weights,
        tolerance=project.tie_tolerance,
        consistency_source="repeats",
        repeat_mu=repeats[0],
        repeat_nu=repeats[1],
        repeat_mask=repeats[2],
    )
    if present.any():
        consensus_weight = weights_maths.iterative_consensus_weights(mu, nu, present).weight
    else:
        consensus_weight = np.full(n_annotators, np.nan)

    n_labels = np.bincount(data.annotation_annotator, minlength=n_annotators)
    median_time = _per_annotator_median(data.annotation_annotator, data.time_spent_ms, n_annotators)
    items, slots = np.nonzero(data.slot_present)
    slot_pi = np.where(data.present, 1.0 - data.mu - data.nu, 0.0).sum(axis=(1, 2))[items, slots]
    slot_count = data.present.sum(axis=(1, 2))[items, slots]
    owner = data.slot_annotator[items, slots]
    pi_sum = np.bincount(owner, weights=slot_pi, minlength=n_annotators)
    pi_count = np.bincount(owner, weights=slot_count, minlength=n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_hesitation = pi_sum / pi_count

    rows = [
        AnnotatorAggregate(
            project_id=project.pk,
            annotator_id=int(data.annotator_ids[a]),
            weight=float(eq8.weight[a]),
            consistency=_optional(eq8.consistency[a]),
            expertise=_optional(eq8.expertise[a]),
            agreement=_optional(eq8.agreement[a]),
            consensus_weight=_optional(consensus_weight[a]),
            n_labels=int(n_labels[a]),
            median_time_ms=None if not np.isfinite(median_time[a]) else round(float(median_time[a])),
            mean_hesitation=_optional(mean_hesitation[a]),
            settings_version=project.settings_version,
            computed_at=now,
        )
        for a in range(n_annotators)
    ]
    study_figures.study_figures_recompute(
        project_id=project.pk, data=data, layout=(mu, nu, present), repeats=repeats, signed=signed_preferences(data)
    )
    # blind_agreement and blind_n belong to the suggestion figures: never overwritten here.
    AnnotatorAggregate.objects.bulk_create(
        rows,
        batch_size=BATCH_SIZE,
        update_conflicts=True,
        unique_fields=["project", "annotator"],
        update_fields=[
            "weight",
            "consistency",
            "expertise",
            "agreement",
            "consensus_weight",
            "n_labels",
            "median_time_ms",
            "mean_hesitation",
            "settings_version",
            "computed_at",
        ],
    )
    AnnotatorAggregate.objects.filter(project_id=project.pk).exclude(
        annotator_id__in=data.annotator_ids.tolist()
    ).delete()
    after = {int(a): float(w) for a, w in zip(data.annotator_ids.tolist(), eq8.weight.tolist(), strict=True)}
    return _weights_moved(before, after)


# --------------------------------------------------------------------------------------------------------------
# Project


def _mean_with_ci(values: FloatArray, seed: int) -> dict[str, Any]:
    """Mean of the finite values with a percentile bootstrap interval over them (vectorised, chunked)."""
    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return {"value": None, "n": 0, "ci": None}
    rng = np.random.default_rng(seed)
    n_boot = _n_boot(n)
    chunk = max(1, min(n_boot, 2_000_000 // n))
    replicates: list[FloatArray] = []
    done = 0
    while done < n_boot:
        rows = min(chunk, n_boot - done)
        replicates.append(finite[rng.integers(0, n, size=(rows, n))].mean(axis=1))
        done += rows
    low, high = np.quantile(np.concatenate(replicates), [0.025, 0.975])
    return {"value": float(finite.mean()), "n": n, "ci": [float(low), float(high)]}


def _hesitation_histograms(data: Judgments) -> dict[str, Any]:
    """Counts of π per criterion in HESITATION_BINS equal bins of [0, 1]; a bin holds its lower edge, the last one
    also 1. Binned in whole per-mille, as stored, so a value on an edge (π = 0.3) never falls by rounding."""
    edges = np.linspace(0, PERMILLE, HESITATION_BINS + 1)
    names = dict(data.project.criteria.values_list("pk", "name"))
    pi = np.rint(PERMILLE * (1.0 - data.mu - data.nu))
    criteria = []
    for c, criterion_id in enumerate(data.criterion_ids.tolist()):
        values = pi[:, :, c, :][data.present[:, :, c, :]]
        counts, _ = np.histogram(values, bins=edges)
        criteria.append(
            {
                "criterion_id": criterion_id,
                "name": names.get(criterion_id, ""),
                "counts": counts.tolist(),
                "n": int(values.size),
            }
        )
    return {"bins": [round(float(e) / PERMILLE, 6) for e in edges], "criteria": criteria}


def _agreement_over_time(data: Judgments, s: FloatArray, tie_band: float) -> list[dict[str, Any]]:
    """Cumulative agreement at the end of each day labels were created (thinned to TIME_POINTS days)."""
    if data.annotation_ids.size == 0:
        return []
    created = (
        dict(Annotation.objects.filter(pk__in=data.annotation_ids.tolist()).values_list("pk", TruncDate("created_at")))
        if data.annotation_ids.size <= 50_000
        else dict(Annotation.objects.filter(project_id=data.project.pk).values_list("pk", TruncDate("created_at")))
    )
    day = np.array([created.get(int(pk)) for pk in data.annotation_ids], dtype="datetime64[D]")
    slot_day = np.full(data.slot_annotator.shape, np.datetime64("NaT"), dtype="datetime64[D]")
    slot_day[data.annotation_item, data.annotation_slot] = day
    days = np.unique(day[~np.isnat(day)])
    if days.size > TIME_POINTS:
        days = days[np.unique(np.linspace(0, days.size - 1, TIME_POINTS).round().astype(int))]
    points = []
    for d in days:
        upto = data.slot_present & (slot_day <= d)
        known = upto & ~np.isnan(s)
        alpha = agreement_maths.krippendorff_alpha_interval(np.where(known, s, 0.0), known)
        pairwise = agreement_maths.pairwise_agreement(
            agreement_maths.preference_sign(np.where(known, s, np.nan), tie_band), known, with_ties=True
        )
        ifs_value = None
        if data.present.any():
            per_item = ifs.ifs_agreement(data.mu, data.nu, data.present & upto[:, None, None, :])
            finite = per_item[np.isfinite(per_item)]
            ifs_value = float(finite.mean()) if finite.size else None
        points.append(
            {
                "date": str(d),
                "n_labels": int(upto.sum()),
                "alpha_interval": _optional(alpha),
                "pairwise_with_ties": pairwise.value,
                "ifs": ifs_value,
            }
        )
    return points


def _weights_plot(project: Project) -> list[dict[str, Any]]:
    rows = AnnotatorAggregate.objects.filter(project_id=project.pk).order_by("-weight", "annotator_id")
    return [
        {
            "annotator_id": row["annotator_id"],
            "username": row["annotator__username"],
            "weight": row["weight"],
            "consistency": row["consistency"],
            "expertise": row["expertise"],
            "agreement": row["agreement"],
            "consensus_weight": row["consensus_weight"],
            "n_labels": row["n_labels"],
        }
        for row in rows.values(
            "annotator_id",
            "annotator__username",
            "weight",
            "consistency",
            "expertise",
            "agreement",
            "consensus_weight",
            "n_labels",
        )
    ]


def _progress(project: Project, data: Judgments) -> dict[str, Any]:
    overlap = int(project.overlap)
    per_item = data.n_annotators
    usernames = dict(get_user_model().objects.filter(pk__in=data.annotator_ids.tolist()).values_list("pk", "username"))
    labels = np.bincount(data.annotation_annotator, minlength=data.annotator_ids.size)
    skipped = dict(
        Assignment.objects.filter(project_id=project.pk, status=Assignment.Status.SKIPPED)
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("annotator_id", "n")
    )
    for annotator_id in skipped:
        if annotator_id not in usernames:
            usernames[annotator_id] = ""
    if skipped:
        usernames.update(get_user_model().objects.filter(pk__in=list(skipped)).values_list("pk", "username"))
    labelled = {int(a): int(n) for a, n in zip(data.annotator_ids.tolist(), labels.tolist(), strict=True)}
    annotators = [
        {
            "annotator_id": annotator_id,
            "username": usernames.get(annotator_id, ""),
            "labels": labelled.get(annotator_id, 0),
            "skipped": int(skipped.get(annotator_id, 0)),
        }
        for annotator_id in sorted(set(labelled) | set(skipped))
    ]
    # Items a lead sent back want more than the overlap (annotation.note_services.item_send_back); few rows.
    extra = dict(Item.objects.filter(project_id=project.pk, extra_labels__gt=0).values_list("id", "extra_labels"))
    wanted = np.full(data.item_ids.size, overlap, dtype=np.int64)
    if extra:
        wanted += np.array([extra.get(int(i), 0) for i in data.item_ids.tolist()], dtype=np.int64)
    return {
        "items_total": int(data.item_ids.size),
        "items_done": int((per_item >= wanted).sum()),
        "overlap": overlap,
        "labels_needed": int(wanted.sum()),
        "labels_done": int(np.minimum(per_item, wanted).sum()),
        "labels_total": int(per_item.sum()),
        "annotators": annotators,
    }


@transaction.atomic
def project_agreement_recompute(*, project_id: int) -> ProjectAggregate:
    """Write ProjectAggregate.agreement, .plots and .progress (never .suggestions, which has its own writer).

    ``agreement``: pairwise_with_ties, pairwise_without_ties, alpha_interval, alpha_nominal (all on the signed
    preference, comparable across modes, tie band = tie_tolerance/2) and ifs (mean per-item IFS agreement, corrected
    Eq. 11), each {"value", "n", "ci": [low, high]} with an interval over items: closed forms for the first four
    (aggregation.intervals, checked for coverage by simulation), a percentile bootstrap for the mean IFS agreement.
    """
    project = Project.objects.get(pk=project_id)
    newest = Annotation.objects.filter(project_id=project.pk).aggregate(newest=Max("updated_at"))["newest"]
    data = judgments_load(project=project)
    s = signed_preferences(data)
    known = data.slot_present & ~np.isnan(s)
    tie_band = project.tie_tolerance / 2.0
    seed = int(project.seed) % (2**32)
    figures = agreement_maths.cross_mode_agreement(np.where(known, s, 0.0), known, tie_band=tie_band)
    agreement: dict[str, Any] = {name: estimate.as_dict() for name, estimate in figures.items()}
    if data.present.any():
        agreement["ifs"] = _mean_with_ci(ifs.ifs_agreement(data.mu, data.nu, data.present), seed)
    else:
        agreement["ifs"] = {"value": None, "n": 0, "ci": None}

    plots = {
        "hesitation": _hesitation_histograms(data),
        "agreement_over_time": _agreement_over_time(data, s, tie_band),
        "weights": _weights_plot(project),
    }
    now = timezone.now()
    aggregate = ProjectAggregate(
        project_id=project.pk,
        agreement=agreement,
        plots=plots,
        progress=_progress(project, data),
        source_updated_at=newest,
        settings_version=project.settings_version,
        agreement_computed_at=now,
        computed_at=now,
    )
    ProjectAggregate.objects.bulk_create(
        [aggregate],
        update_conflicts=True,
        unique_fields=["project"],
        update_fields=[
            "agreement",
            "plots",
            "progress",
            "source_updated_at",
            "settings_version",
            "agreement_computed_at",
            "computed_at",
        ],
    )
    return cast(ProjectAggregate, ProjectAggregate.objects.get(project_id=project.pk))


# --------------------------------------------------------------------------------------------------------------
# The whole project, and finding stale aggregates

#: Item aggregates are recomputed after a weight run only when some weight moved by more than this share of the
#: largest weight: every new label nudges leave-one-out agreement, and re-weighting a large project for a nudge
#: that cannot move any headline figure would keep the workers busy for nothing.
WEIGHT_CHANGE_TOLERANCE = 0.005


def _weights_moved(before: dict[int, float], after: dict[int, float]) -> bool:
    if before.keys() != after.keys():
        return True
    if not after:
        return False
    largest = max(max(after.values()), 1e-12)
    return any(abs(before[a] - after[a]) > WEIGHT_CHANGE_TOLERANCE * largest for a in after)


def _items_behind_settings(project_id: int) -> bool:
    """Some human item aggregate was computed before the project's last figure-relevant settings change."""
    behind = Project.objects.filter(pk=project_id).values("settings_version")[:1]
    return ItemAggregate.objects.filter(
        project_id=project_id, provenance=Provenance.HUMAN, settings_version__lt=Subquery(behind)
    ).exists()


def project_aggregates_recompute(*, project_id: int) -> dict[str, Any]:
    """The project-level run, in order: annotator weights; every item aggregate if the weights moved or a setting
    changed since they were computed (Project.settings_version); agreement,
    plots and progress; then the suggestion figures and the handoff evaluation (the suggestions app's, reached
    through events.figures_recomputed). Each step
    commits on its own, so a failure later leaves the earlier figures written. Returns what it did."""
    moved = annotator_aggregates_recompute(project_id=project_id)
    items = item_aggregates_recompute(project_id=project_id) if moved or _items_behind_settings(project_id) else 0
    project_agreement_recompute(project_id=project_id)
    adaptive_services.adaptive_overlap_plan(project_id=project_id)
    # After the agreement: the suggestion figures (connected by the suggestions app) put the human-human ceiling
    # beside the model's agreement, then the handoff rule reads them.
    events.figures_recomputed(project_id=project_id)
    done: dict[str, Any] = {"weights_moved": moved, "items": items, "suggestion_figures": True, "handoff": True}
    return done


def stale_items_list(*, limit: int | None = None) -> dict[int, list[int]]:
    """Items whose newest annotation is newer than their aggregate, or that have annotations but no aggregate,
    grouped by project id. Reads one indexed subquery per item (annotation (item, updated_at) index)."""
    newest = Annotation.objects.filter(item_id=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    stale = (
        Item.objects.annotate(newest=Subquery(newest))
        .filter(newest__isnull=False)
        .filter(
            Q(aggregate__isnull=True)
            | Q(aggregate__source_updated_at__isnull=True)
            | Q(aggregate__source_updated_at__lt=F("newest"))
            | Q(aggregate__provenance=Provenance.HUMAN, aggregate__settings_version__lt=F("project__settings_version"))
        )
        .order_by("project_id", "pk")
        .values_list("project_id", "pk")
    )
    if limit is not None:
        stale = stale[:limit]
    found: dict[int, list[int]] = {}
    for project_id, item_id in stale:
        found.setdefault(project_id, []).append(item_id)
    return found


def stale_projects_list() -> list[int]:
    """Projects with annotations whose ProjectAggregate is missing or older than their newest annotation, and
    projects whose figures were computed before their last figure-relevant settings change."""
    newest = Annotation.objects.filter(project_id=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    return list(
        Project.objects.annotate(newest=Subquery(newest))
        .filter(
            Q(
                newest__isnull=False,
                aggregate__isnull=True,
            )
            | Q(newest__isnull=False, aggregate__source_updated_at__isnull=True)
            | Q(newest__isnull=False, aggregate__source_updated_at__lt=F("newest"))
            | Q(aggregate__settings_version__lt=F("settings_version"))
            | Q(aggregate__suggestions_settings_version__lt=F("settings_version"))
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
