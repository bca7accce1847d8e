"""Self-consistency: how closely each annotator repeats their own judgment of an item. Pure numpy, no Django.

Each repeat gives one distance d ∈ [0, 1] between the first and the second judgment of the same item by the same
person: the Szmidt-Kacprzyk distance averaged over the item's responses × criteria for IFS sliders, and the same
distance between the (μ, ν) projections of the signed preference for binary and Likert labels (the projection of
``annotator_figures.annotator_layout``). Consistency = 1 − mean d, the quantity Eq. 8's consistency part uses
(``aggregation.maths.weights``). Its interval is a t interval over the person's repeats (each repeat is a different
item,
so the distances are independent given the person), clipped to [0, 1]; with one repeat there is none.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.intervals import t_quantile

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def sk_distance(d_mu: ArrayLike, d_nu: ArrayLike) -> FloatArray:
    """The Szmidt-Kacprzyk distance of two (μ, ν) values from their differences (π's difference is −(Δμ + Δν))."""
    dm, dn = np.asarray(d_mu, dtype=np.float64), np.asarray(d_nu, dtype=np.float64)
    return np.asarray(np.sqrt(np.maximum(dm * (dm + dn) + dn * dn, 0.0)), dtype=np.float64)


def signed_distance(first: ArrayLike, second: ArrayLike) -> FloatArray:
    """The distance between two binary or Likert judgments given as signed preferences s ∈ [−1, 1]: the distance
    between their (μ, ν) projections, (max(s, 0), max(−s, 0)) for the first response and the mirror for the other,
    which is the same for both responses, so it is their mean. NaN where either is NaN."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    return sk_distance(np.maximum(a, 0.0) - np.maximum(b, 0.0), np.maximum(-a, 0.0) - np.maximum(-b, 0.0))


def consistency_with_interval(
    distance: ArrayLike, annotator: ArrayLike, n_annotators: int, level: float = 0.95
) -> dict[str, np.ndarray[Any, Any]]:
    """Per annotator: ``value`` (1 − mean distance, NaN without repeats), ``low``/``high`` (NaN with fewer than
    two repeats) and ``n`` (repeats)."""
    d = np.asarray(distance, dtype=np.float64).ravel()
    who = np.asarray(annotator, dtype=np.int64).ravel()
    if d.shape != who.shape:
        raise ValueError("distance and annotator need one entry per repeat")
    keep = np.isfinite(d)
    d, who = d[keep], who[keep]
    n = np.bincount(who, minlength=n_annotators)
    total = np.bincount(who, weights=d, minlength=n_annotators)
    squares = np.bincount(who, weights=d * d, minlength=n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        variance = (squares - n * mean * mean) / (n - 1)
    value = 1.0 - mean
    low = np.full(n_annotators, np.nan)
    high = np.full(n_annotators, np.nan)
    for a in np.flatnonzero(n >= 2):
        half = t_quantile(level, int(n[a]) - 1) * np.sqrt(max(variance[a], 0.0) / n[a])
        low[a] = max(0.0, value[a] - half)
        high[a] = min(1.0, value[a] + half)
    return {"value": value, "low": low, "high": high, "n": n.astype(np.int64)}
