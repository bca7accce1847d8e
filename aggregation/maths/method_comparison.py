"""Figures of a crossover method study: per method, and paired within annotators (pure numpy, no Django).

Every label is put on the common scale first (a signed preference s ∈ [−1, 1], :mod:`aggregation.maths.agreement`), so
binary, Likert and IFS labels are compared on one scale, not each on its own.

What is computed, and over what the intervals run:

- Agreement per method: the four figures of :func:`agreement.cross_mode_agreement` (α interval on s, α nominal on
  sign(s), pairwise with and without ties) among the labels given with that method; intervals over items.
- Per annotator and method: agreement with gold (sign of s against the gold preference, where the item has gold),
  agreement with the others (share of pairs formed with every other label of the same item, under any method, whose
  signs agree: the common scale makes the others a fixed yardstick for every method), and mean seconds per item.
  The per-method figure is the mean over annotators with a t interval over annotators: an annotator's labels are
  not independent of each other, so the annotator is the unit.
- Paired differences: for two methods a and b and each annotator who used both, d = figure(b) − figure(a); the
  mean of d with a t interval over annotators. In a crossover every annotator is their own control, so differences
  in skill between people cancel; this is what a design with one group per method cannot do.
- Self-consistency (unannounced repeats): per method, 1 − the mean distance between the first and the repeated
  judgment of the repeats whose first judgment was made with that method (:mod:`aggregation.maths.self_consistency`),
  with
  its t interval over those repeats (each a different item or person); and per annotator and method the same figure,
  whose paired differences between methods (annotators with repeats under both) are read like the others.
- Fatigue: per annotator, the least-squares slope of seconds per item and of agreement with gold against position
  in their session (per 10 items); the mean slope over annotators with its t interval, over the whole session and
  within each method's block. The Williams order puts every method in every period equally often, so a slope over
  the session is not a method effect in disguise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from aggregation.maths.agreement import DEFAULT_TIE_BAND, Estimate, cross_mode_agreement, preference_sign
from aggregation.maths.intervals import t_quantile
from aggregation.maths.self_consistency import consistency_with_interval

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Per-annotator figures, compared between methods.
ANNOTATOR_FIGURES = ("gold_agreement", "peer_agreement", "seconds_per_item")
#: The range each per-annotator figure can take: shares of labels agreeing, and a time.
FIGURE_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "gold_agreement": (0.0, 1.0),
    "peer_agreement": (0.0, 1.0),
    "seconds_per_item": (0.0, None),
}
#: Slopes are per this many items, so they read as "per ten items later in the session".
SLOPE_UNIT = 10.0


@dataclass(frozen=True)
class Labels:
    """One row per label. ``method`` indexes ``methods``; ``position`` is the label's 0-based place in its
    annotator's session; ``gold`` is the gold preference's sign (+1 for the response at position 0, −1 for the other,
    0 a tie), NaN where the item has no gold."""

    item: IntArray
    annotator: IntArray
    method: IntArray
    position: FloatArray
    seconds: FloatArray
    signed: FloatArray
    gold: FloatArray
    methods: Sequence[str]
    tie_band: float = DEFAULT_TIE_BAND

    @classmethod
    def from_lists(cls, *, methods: Sequence[str], tie_band: float = DEFAULT_TIE_BAND, **columns: Any) -> Labels:
        return cls(
            item=np.asarray(columns["item"], dtype=np.int64),
            annotator=np.asarray(columns["annotator"], dtype=np.int64),
            method=np.asarray(columns["method"], dtype=np.int64),
            position=np.asarray(columns["position"], dtype=np.float64),
            seconds=np.asarray(columns["seconds"], dtype=np.float64),
            signed=np.asarray(columns["signed"], dtype=np.float64),
            gold=np.asarray(columns["gold"], dtype=np.float64),
            methods=list(methods),
            tie_band=tie_band,
        )

    def __len__(self) -> int:
        return int(self.item.size)


def mean_interval(
    values: Sequence[float] | FloatArray, level: float = 0.95, bounds: tuple[float | None, float | None] = (None, None)
) -> Estimate:
    """Mean with a Student t interval over the (independent) values given; no interval below two values. With
    ``bounds`` (the figure's possible range) the interval is truncated to it: the mean of values in [0, 1] cannot lie
    outside [0, 1], so an interval reaching −0.354 claims nothing more than one stopping at 0."""
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Estimate(value=None, n=0)
    mean = float(x.mean())
    if x.size < 2:
        return Estimate(value=mean, n=1)
    half = t_quantile(level, int(x.size) - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    low, high = mean - half, mean + half
    if bounds[0] is not None:
        low = max(low, bounds[0])
    if bounds[1] is not None:
        high = min(high, bounds[1])
    return Estimate(value=mean, n=int(x.size), ci=(low, high))


def _slope(x: FloatArray, y: FloatArray) -> float:
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3 or np.ptp(x) == 0:
        return math.nan
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum()) * SLOPE_UNIT


def _peer_agreement(labels: Labels, signs: FloatArray) -> FloatArray:
    """Per label, the share of the item's other labels (any method, any annotator) whose sign equals its own."""
    n = len(labels)
    out = np.full(n, np.nan)
    if n == 0:
        return out
    codes = signs + 1.0  # -1, 0, 1 → 0, 1, 2
    items, index = np.unique(labels.item, return_inverse=True)
    counts = np.zeros((items.size, 3))
    np.add.at(counts, (index, codes.astype(np.int64)), 1.0)
    total = counts.sum(axis=1)[index]
    same = counts[index, codes.astype(np.int64)]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 1, (same - 1.0) / (total - 1.0), np.nan)
    return np.asarray(out, dtype=np.float64)


@dataclass
class StudyFigures:
    """Everything the report shows; ``as_dict`` is the JSON of the API and the source of the CSV."""

    methods: list[dict[str, Any]] = field(default_factory=list)
    paired: list[dict[str, Any]] = field(default_factory=list)
    fatigue: dict[str, Any] = field(default_factory=dict)
    per_annotator: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "methods": self.methods,
            "paired": self.paired,
            "fatigue": self.fatigue,
            "per_annotator": self.per_annotator,
        }


def per_annotator_figures(labels: Labels) -> dict[tuple[int, int], dict[str, float]]:
    """(annotator, method) → the figures of ``ANNOTATOR_FIGURES`` (NaN where undefined, e.g. no gold)."""
    signs = preference_sign(labels.signed, labels.tie_band)
    peer = _peer_agreement(labels, signs)
    correct = np.where(np.isnan(labels.gold), np.nan, (signs == labels.gold).astype(np.float64))
    out: dict[tuple[int, int], dict[str, float]] = {}
    for annotator, method in sorted(set(zip(labels.annotator.tolist(), labels.method.tolist(), strict=True))):
        rows = (labels.annotator == annotator) & (labels.method == method)
        out[(annotator, method)] = {
            "gold_agreement": float(np.nanmean(correct[rows])) if np.isfinite(correct[rows]).any() else math.nan,
            "peer_agreement": float(np.nanmean(peer[rows])) if np.isfinite(peer[rows]).any() else math.nan,
            "seconds_per_item": float(labels.seconds[rows].mean()),
            "labels": float(rows.sum()),
        }
    return out


def paired_differences(
    labels: Labels, figures: dict[tuple[int, int], dict[str, float]] | None = None
) -> list[dict[str, Any]]:
    """For every pair of methods (a before b in ``labels.methods``) and every per-annotator figure: the mean over
    annotators of figure(b) − figure(a), with its t interval (annotators who used both and have the figure)."""
    figures = per_annotator_figures(labels) if figures is None else figures
    annotators = sorted({a for a, _ in figures})
    rows: list[dict[str, Any]] = []
    for a in range(len(labels.methods)):
        for b in range(a + 1, len(labels.methods)):
            for name in ANNOTATOR_FIGURES:
                diffs = [
                    figures[(j, b)][name] - figures[(j, a)][name]
                    for j in annotators
                    if (j, a) in figures and (j, b) in figures
                ]
                estimate = mean_interval(diffs)
                rows.append(
                    {
                        "figure": name,
                        "first": labels.methods[a],
                        "second": labels.methods[b],
                        **estimate.as_dict(),
                    }
                )
    return rows


def _fatigue_of(labels: Labels, rows: NDArray[np.bool_], correct: FloatArray) -> dict[str, Any]:
    time_slopes, gold_slopes = [], []
    for annotator in np.unique(labels.annotator[rows]):
        mine = rows & (labels.annotator == annotator)
        time_slopes.append(_slope(labels.position[mine], labels.seconds[mine]))
        gold_slopes.append(_slope(labels.position[mine], correct[mine]))
    return {
        "seconds_slope": mean_interval(time_slopes).as_dict(),
        "gold_agreement_slope": mean_interval(gold_slopes).as_dict(),
    }


def fatigue_figures(labels: Labels) -> dict[str, Any]:
    """Slopes against position (per ``SLOPE_UNIT`` items) over the whole session and within each method, plus the
    mean seconds and gold agreement per tenth of the session for the plot."""
    signs = preference_sign(labels.signed, labels.tie_band)
    correct = np.where(np.isnan(labels.gold), np.nan, (signs == labels.gold).astype(np.float64))
    everything = np.ones(len(labels), dtype=bool)
    result: dict[str, Any] = {"session": _fatigue_of(labels, everything, correct), "per_method": {}}
    for index, name in enumerate(labels.methods):
        result["per_method"][name] = _fatigue_of(labels, labels.method == index, correct)
    bins: list[dict[str, Any]] = []
    if len(labels):
        top = float(labels.position.max()) + 1.0
        edges = np.linspace(0.0, top, 11)
        for low, high in itertools.pairwise(edges):
            inside = (labels.position >= low) & (labels.position < high)
            bins.append(
                {
                    "from": float(low),
                    "to": float(high),
                    "labels": int(inside.sum()),
                    "seconds": float(labels.seconds[inside].mean()) if inside.any() else None,
                    "gold_agreement": float(np.nanmean(correct[inside]))
                    if np.isfinite(correct[inside]).any()
                    else None,
                }
            )
    result["by_position"] = bins
    return result


def method_figures(labels: Labels) -> StudyFigures:
    """The report's figures (module docstring). With no labels every figure is there, empty (value None, n 0)."""
    figures = per_annotator_figures(labels)
    out = StudyFigures()
    for index, name in enumerate(labels.methods):
        rows = labels.method == index
        items, item_index = np.unique(labels.item[rows], return_inverse=True)
        annotators, annotator_index = np.unique(labels.annotator[rows], return_inverse=True)
        matrix = np.full((items.size, annotators.size), np.nan)
        matrix[item_index, annotator_index] = labels.signed[rows]
        agreement = cross_mode_agreement(matrix, tie_band=labels.tie_band)
        mine = {a: f for (a, m), f in figures.items() if m == index}
        entry: dict[str, Any] = {
            "method": name,
            "labels": int(rows.sum()),
            "annotators": int(annotators.size),
            "items": int(items.size),
            "agreement": {key: value.as_dict() for key, value in agreement.items()},
        }
        for figure in ANNOTATOR_FIGURES:
            entry[figure] = mean_interval([f[figure] for f in mine.values()], bounds=FIGURE_BOUNDS[figure]).as_dict()
        out.methods.append(entry)
    out.paired = paired_differences(labels, figures)
    out.fatigue = fatigue_figures(labels)
    out.per_annotator = [
        {"annotator": a, "method": labels.methods[m], **{k: (None if math.isnan(v) else v) for k, v in f.items()}}
        for (a, m), f in sorted(figures.items())
    ]
    return out


def _number(x: float) -> float | None:
    return None if not math.isfinite(x) else float(x)


def consistency_figures(
    distance: Sequence[float] | FloatArray,
    annotator: Sequence[int] | IntArray,
    method: Sequence[int] | IntArray,
    methods: Sequence[str],
) -> dict[str, Any]:
    """Self-consistency per method from one distance per answered repeat (NaN: no judgment, left out), the
    repeat's annotator and the method (index into ``methods``) of its first judgment. Returns ``methods`` (value,
    n repeats, 95 % interval, annotators), ``paired`` (mean within-annotator difference second − first, t interval
    over annotators with repeats under both) and ``per_annotator``."""
    d = np.asarray(distance, dtype=np.float64)
    how = np.asarray(method, dtype=np.int64)
    people, person = np.unique(np.asarray(annotator, dtype=np.int64), return_inverse=True)
    k = len(methods)
    pooled = consistency_with_interval(d, how, k)
    cells = consistency_with_interval(d, person * k + how, people.size * k)
    value, n = cells["value"].reshape(people.size, k), cells["n"].reshape(people.size, k)
    per_method = []
    for m, name in enumerate(methods):
        low, high = pooled["low"][m], pooled["high"][m]
        per_method.append(
            {
                "method": name,
                "value": _number(pooled["value"][m]) if pooled["n"][m] else None,
                "n": int(pooled["n"][m]),
                "ci": [float(low), float(high)] if np.isfinite(low) else None,
                "annotators": int((n[:, m] > 0).sum()),
            }
        )
    paired = []
    for a in range(k):
        for b in range(a + 1, k):
            both = (n[:, a] > 0) & (n[:, b] > 0)
            estimate = mean_interval(value[both, b] - value[both, a])
            paired.append(
                {"figure": "self_consistency", "first": methods[a], "second": methods[b], **estimate.as_dict()}
            )
    per_annotator = [
        {
            "annotator": int(people[j]),
            "method": methods[m],
            "self_consistency": float(value[j, m]),
            "repeats": int(n[j, m]),
        }
        for j in range(people.size)
        for m in range(k)
        if n[j, m] > 0
    ]
    return {"methods": per_method, "paired": paired, "per_annotator": per_annotator, "repeats": int(pooled["n"].sum())}
