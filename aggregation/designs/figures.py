"""Figures of the study designs, stored in ``ProjectAggregate.study``: repeats and self-consistency, position bias,
and what adaptive overlap spent and changed.

Computed by :func:`study_figures_recompute` in the project recompute, after the weights and the item aggregates, from
rows and the judgment arrays of ``aggregation.services``; the maths is in ``aggregation.maths.self_consistency``,
``aggregation.maths.position_bias`` and ``aggregation.maths.adaptive``. :func:`repeat_layout` also feeds the
consistency part of
Eq. 8 in ``annotator_aggregates_recompute``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Count, IntegerField, Q, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from aggregation.figures.judgments import Judgments
from aggregation.maths import adaptive
from aggregation.maths import agreement as agreement_maths
from aggregation.maths.position_bias import first_preferred, position_bias
from aggregation.maths.self_consistency import consistency_with_interval, sk_distance
from aggregation.models import ItemAggregate, ProjectAggregate
from annotation.models import Annotation, ItemEscalation, Repeat, RepeatValue
from projects.models import PERMILLE, TIE, Project

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
_NO_BINARY = -9
#: Up to this many annotation ids are read by id; more, by project.
IN_LIST_LIMIT = 50_000


def repeat_layout(
    *, project: Project, data: Judgments, shape: tuple[int, ...]
) -> tuple[FloatArray, FloatArray, np.ndarray[Any, Any]]:
    """Answered repeats in the annotator layout of ``annotator_figures.annotator_layout`` (``shape``: items ×
    positions × criteria × annotators): IFS values as they are, binary and Likert answers as the (μ, ν) projection
    of their signed preference, so they compare with the first judgment the same way."""
    rmu, rnu, rmask = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    repeats = Repeat.objects.filter(project_id=project.pk, answered_at__isnull=False)
    if data.item_ids.size == 0 or data.annotator_ids.size == 0:
        return rmu, rnu, rmask
    ifs_layout = shape[2] == data.criterion_ids.size and data.present.any()
    if ifs_layout:
        rows = np.array(
            list(
                RepeatValue.objects.filter(repeat__in=repeats).values_list(
                    "repeat__item_id", "repeat__annotator_id", "response__position", "criterion_id", "mu", "nu"
                )
            ),
            dtype=np.int64,
        ).reshape(-1, 6)
        item, annotator, known = _indexes(data, rows[:, 0], rows[:, 1])
        criterion = np.searchsorted(np.sort(data.criterion_ids), rows[:, 3])
        order = np.argsort(data.criterion_ids)
        criterion = order[np.minimum(criterion, data.criterion_ids.size - 1)]
        known &= data.criterion_ids[criterion] == rows[:, 3]
        known &= rows[:, 2] < shape[1]
        at = (item[known], rows[known, 2], criterion[known], annotator[known])
        rmu[at] = rows[known, 4] / PERMILLE
        rnu[at] = rows[known, 5] / PERMILLE
        rmask[at] = True
        return rmu, rnu, rmask
    rows = np.array(
        list(
            repeats.values_list(
                "item_id", "annotator_id", Coalesce("binary_choice", Value(_NO_BINARY)), Coalesce("likert_value", 0)
            )
        ),
        dtype=np.int64,
    ).reshape(-1, 4)
    item, annotator, known = _indexes(data, rows[:, 0], rows[:, 1])
    binary_ok = np.isin(rows[:, 2], (0, 1, TIE))
    likert_ok = (rows[:, 3] >= 1) & (rows[:, 3] <= project.likert_points)
    s = np.full(rows.shape[0], np.nan)
    s = np.where(binary_ok, agreement_maths.signed_preference_binary(np.where(binary_ok, rows[:, 2], 0), binary_ok), s)
    s = np.where(
        likert_ok & ~binary_ok,
        agreement_maths.signed_preference_likert(np.where(likert_ok, rows[:, 3], 1), project.likert_points, likert_ok),
        s,
    )
    known &= ~np.isnan(s)
    i, a, v = item[known], annotator[known], s[known]
    rmu[i, 0, 0, a], rnu[i, 0, 0, a] = np.maximum(v, 0.0), np.maximum(-v, 0.0)
    rmu[i, 1, 0, a], rnu[i, 1, 0, a] = np.maximum(-v, 0.0), np.maximum(v, 0.0)
    rmask[i, :2, 0, a] = True
    return rmu, rnu, rmask


def _indexes(data: Judgments, item_ids: Any, annotator_ids: Any) -> tuple[Any, Any, Any]:
    item = np.minimum(np.searchsorted(data.item_ids, item_ids), data.item_ids.size - 1)
    annotator = np.minimum(np.searchsorted(data.annotator_ids, annotator_ids), data.annotator_ids.size - 1)
    known = (data.item_ids[item] == item_ids) & (data.annotator_ids[annotator] == annotator_ids)
    return item, annotator, known


def repeat_distances(
    mu: FloatArray, nu: FloatArray, present: np.ndarray[Any, Any], rmu: FloatArray, rnu: FloatArray, rmask: Any
) -> tuple[FloatArray, np.ndarray[Any, Any]]:
    """(distance, annotator index) per repeated (item, annotator): the mean Szmidt-Kacprzyk distance over the
    values both judgments have."""
    both = present & rmask
    d = np.where(both, sk_distance(mu - rmu, nu - rnu), 0.0).sum(axis=(1, 2))
    count = both.sum(axis=(1, 2))
    items, annotators = np.nonzero(count)
    return d[items, annotators] / count[items, annotators], annotators


def _position_bias(data: Judgments, signed: FloatArray) -> dict[str, Any]:
    """Decided two-response judgments whose screen order is known: preferred position from the signed preference
    with the project's tie band (|S_A − S_B| below the tolerance), first-shown position from the stored order.
    Labels imported without their order are left out (their stored order is a placeholder) and counted in
    ``unknown_order``."""
    n = data.annotation_ids.size
    if n == 0:
        empty = position_bias(np.zeros(0), np.zeros(0, dtype=np.int64), 0).as_dict(data.annotator_ids)
        return {**empty, "unknown_order": 0}
    # A project's worth of ids in one IN list costs the driver seconds to send: above a few tens of thousands, all
    # of the project's annotations are read (ids not loaded are not matched below).
    known = (
        Annotation.objects.filter(pk__in=data.annotation_ids.tolist(), order_known=True)
        if n <= IN_LIST_LIMIT
        else Annotation.objects.filter(project_id=data.settings.project_id, order_known=True)
    )
    shown = np.array(
        list(known.order_by("pk").values_list("pk", Cast(KT("response_order__0"), IntegerField()))),
        dtype=np.int64,
    ).reshape(-1, 2)
    at = np.searchsorted(shown[:, 0], data.annotation_ids)
    at = np.minimum(at, max(shown.shape[0] - 1, 0))
    order_known = (shown[at, 0] == data.annotation_ids) if shown.shape[0] > 0 else np.zeros(n, dtype=bool)
    first = np.where(order_known, shown[at, 1] if shown.shape[0] > 0 else 0, 0)
    s = signed[data.annotation_item, data.annotation_slot]
    band = float(data.settings.tie_tolerance) / 2.0
    preferred = np.where(s > band, 0, np.where(s < -band, 1, TIE))
    outcome = first_preferred(preferred, first)
    outcome[np.isnan(s) | ~order_known] = np.nan
    result = position_bias(outcome, data.annotation_annotator, data.annotator_ids.size)
    return {**result.as_dict(data.annotator_ids), "unknown_order": int((~order_known).sum())}


def _consistency(data: Judgments, layout: tuple[FloatArray, FloatArray, Any], repeats: Any) -> dict[str, Any]:
    mu, nu, present = layout[0], layout[1], layout[2]
    rmu, rnu, rmask = repeats
    distance, annotator = repeat_distances(mu, nu, present, rmu, rnu, rmask)
    figures = consistency_with_interval(distance, annotator, data.annotator_ids.size)
    rows = []
    for a in range(data.annotator_ids.size):
        n = int(figures["n"][a])
        low, high = figures["low"][a], figures["high"][a]
        rows.append(
            {
                "annotator_id": int(data.annotator_ids[a]),
                "consistency": None if n == 0 else round(float(figures["value"][a]), 4),
                "ci": None if not np.isfinite(low) else [round(float(low), 4), round(float(high), 4)],
                "n": n,
            }
        )
    return {"annotators": rows, "n": int(figures["n"].sum())}


def _adaptive(project: Project) -> dict[str, Any]:
    rows = list(
        ItemEscalation.objects.filter(project=project).values_list(
            "item_id", "reason", "extra", "before_labels", "before_preferred", "before_margin", "item__annotation_count"
        )
    )
    current = {
        item: (best, margin)
        for item, best, margin in ItemAggregate.objects.filter(
            project=project, item__escalation__isnull=False
        ).values_list("item_id", "best_position", "margin")
    }
    spent = sum(min(max(count - before, 0), extra) for _, _, extra, before, _, _, count in rows)
    # Only items that received at least one of their extra labels can have changed because of them.
    answered = [row for row in rows if row[6] > row[3]]

    def nan(x: Any) -> float:
        return np.nan if x is None else float(x)

    effect = adaptive.changes(
        [nan(row[4]) for row in answered],
        [nan(current.get(row[0], (None, None))[0]) for row in answered],
        [nan(row[5]) for row in answered],
        [nan(current.get(row[0], (None, None))[1]) for row in answered],
    )
    return {
        "enabled": project.adaptive_cap > 0 and project.adaptive_budget > 0,
        "items": len(rows),
        "hesitant": sum(1 for row in rows if row[1] == ItemEscalation.Reason.HESITANT),
        "disputed": sum(1 for row in rows if row[1] == ItemEscalation.Reason.DISPUTED),
        "granted": sum(row[2] for row in rows),
        "spent": spent,
        "budget": project.adaptive_budget,
        "cap": project.adaptive_cap,
        "expert_id": project.adaptive_expert_id,
        "items_with_new_labels": len(answered),
        **effect,
    }


def study_figures_recompute(
    *, project: Project, data: Judgments, layout: tuple[FloatArray, FloatArray, Any], repeats: Any, signed: FloatArray
) -> dict[str, Any]:
    """Compute and store the study figures. ``layout``: (μ, ν, present) of ``annotator_figures.annotator_layout(data)``;
    ``repeats``: :func:`repeat_layout` of the same shape; ``signed``: signed preferences per (item, slot)."""
    counts = Repeat.objects.filter(project_id=project.pk).aggregate(
        answered=Count("pk", filter=Q(answered_at__isnull=False)), total=Count("pk")
    )
    study = {
        "repeats": {
            "rate": project.repeat_rate,
            "answered": counts["answered"],
            "open": counts["total"] - counts["answered"],
            "delay_items": project.repeat_delay_items,
            "delay_minutes": project.repeat_delay_minutes,
        },
        "consistency": _consistency(data, layout, repeats),
        "position_bias": _position_bias(data, signed),
        "adaptive": _adaptive(project),
    }
    ProjectAggregate.objects.update_or_create(project_id=project.pk, defaults={"study": study})
    return study
