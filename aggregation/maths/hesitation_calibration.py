"""Hesitation calibration: does a person's hesitation π predict when they disagree? Pure numpy, no Django.

IFS judgments carry each person's hesitation π = 1 − μ − ν. Penumbra's weights read a low mean π as reliability
(1 − π̄). That is only right when π *means* something: a person whose disagreement with the others rises with
their hesitation is calibrated, and their π says which of their labels to trust; a person whose π is a habit (always
0.3, whatever the item) is not, and 1 − π̄ then rewards or punishes a style instead of accuracy.

Per label the outcome is d ∈ [0, 1], its disagreement with the item's consensus without it (the share of the other
people's preferred responses that differ, or a repeat of the same item by the same person). From the (π, d) pairs:

* **Reliability diagram** (:func:`reliability_diagram`): the labels binned by π (equal-width bins on [0, 1]); per bin
  the mean π, the disagreement rate and its interval clustered by item
  (:func:`aggregation.maths.intervals.cluster_proportion_interval`: labels of one item share its difficulty).
* **Does π predict disagreement** (:func:`hesitation_slope`): the least-squares slope of d on π with an item-clustered
  (CR1) standard error and a t_{G−1} interval over G items. π predicts when the interval lies above 0. A slope that
  is not shown is the honest answer for a person with few labels.
* **Calibrated reliability** (:func:`calibrated_reliability`): P(agree | π) = 1 − E[d | π] by isotonic regression
  of d on π (pool-adjacent-violators, decreasing in π; Barlow et al. 1972, "Statistical inference under order
  restrictions"): a weight for a label from what its π has meant for this person, in place of 1 − π. Hand-written
  (20 lines) because the project depends on neither scipy nor scikit-learn.

tests/maths/hesitation_simulation.py checks on known truths that the slope's interval covers the true slope at 95 %
and that a person whose π is a habit is found to predict disagreement about 2.5 % of the time (a one-sided error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.intervals import cluster_proportion_interval, t_quantile

FloatArray = NDArray[np.float64]


def _inputs(hesitation: ArrayLike, disagreement: ArrayLike, item: ArrayLike) -> tuple[FloatArray, FloatArray, Any]:
    h = np.asarray(hesitation, dtype=np.float64).ravel()
    d = np.asarray(disagreement, dtype=np.float64).ravel()
    i = np.asarray(item).ravel()
    if not h.shape == d.shape == i.shape:
        raise ValueError("hesitation, disagreement and item need one entry per label")
    if np.any((h < 0) | (h > 1)) or np.any((d < 0) | (d > 1)):
        raise ValueError("hesitation and disagreement must lie in [0, 1]")
    return h, d, i


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    labels: int
    mean_hesitation: float | None
    disagreement: float | None
    ci: tuple[float, float] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "labels": self.labels,
            "mean_hesitation": self.mean_hesitation,
            "disagreement": self.disagreement,
            "ci": None if self.ci is None else list(self.ci),
        }


def reliability_diagram(
    hesitation: ArrayLike, disagreement: ArrayLike, item: ArrayLike, *, bins: int = 5, level: float = 0.95
) -> list[Bin]:
    """Disagreement by bin of hesitation (module docstring)."""
    h, d, i = _inputs(hesitation, disagreement, item)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, h, side="right") - 1, 0, bins - 1)
    out = []
    for k in range(bins):
        inside = which == k
        if not inside.any():
            out.append(Bin(float(edges[k]), float(edges[k + 1]), 0, None, None, None))
            continue
        _, cluster = np.unique(i[inside], return_inverse=True)
        ci = cluster_proportion_interval(np.bincount(cluster, weights=d[inside]), np.bincount(cluster), level)
        mean_h, mean_d = float(h[inside].mean()), float(d[inside].mean())
        out.append(Bin(float(edges[k]), float(edges[k + 1]), int(inside.sum()), mean_h, mean_d, ci))
    return out


@dataclass(frozen=True)
class Slope:
    slope: float | None
    ci: tuple[float, float] | None
    labels: int
    items: int

    @property
    def predicts(self) -> bool:
        return self.ci is not None and self.ci[0] > 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "slope": self.slope,
            "ci": None if self.ci is None else list(self.ci),
            "labels": self.labels,
            "items": self.items,
            "predicts": self.predicts,
        }


def hesitation_slope(hesitation: ArrayLike, disagreement: ArrayLike, item: ArrayLike, *, level: float = 0.95) -> Slope:
    """Least-squares slope of disagreement on hesitation, its item-clustered interval (module docstring). No
    interval with fewer than 3 items or when π does not vary."""
    h, d, i = _inputs(hesitation, disagreement, item)
    _, cluster = np.unique(i, return_inverse=True)
    n, g = h.size, int(cluster.max()) + 1 if h.size else 0
    centred = h - h.mean() if n else h
    sxx = float(np.sum(centred**2))
    if n < 3 or g < 3 or sxx <= 1e-12:
        return Slope(None, None, n, g)
    beta = float(np.sum(centred * (d - d.mean())) / sxx)
    residual = d - d.mean() - beta * centred
    score = np.bincount(cluster, weights=centred * residual)
    variance = g / (g - 1) * (n - 1) / (n - 2) * float(np.sum(score**2)) / sxx**2
    half = t_quantile(level, g - 1) * math.sqrt(variance)
    return Slope(beta, (beta - half, beta + half), n, g)


def _pava_decreasing(y: FloatArray, w: FloatArray) -> FloatArray:
    """Weighted least-squares fit non-increasing in the order given (pool adjacent violators)."""
    values: list[float] = []
    weights: list[float] = []
    sizes: list[int] = []
    for yi, wi in zip(y, w, strict=True):
        values.append(float(yi))
        weights.append(float(wi))
        sizes.append(1)
        while len(values) > 1 and values[-2] < values[-1]:
            total = weights[-2] + weights[-1]
            merged = (values[-2] * weights[-2] + values[-1] * weights[-1]) / total
            size = sizes[-2] + sizes[-1]
            del values[-1], weights[-1], sizes[-1]
            values[-1], weights[-1], sizes[-1] = merged, total, size
    return np.repeat(values, sizes)


def calibrated_reliability(hesitation: ArrayLike, disagreement: ArrayLike, at: ArrayLike) -> FloatArray:
    """P(agree | π) at the hesitations ``at``: 1 − the isotonic (non-decreasing in π) fit of disagreement, read
    off as a step function (module docstring)."""
    h = np.asarray(hesitation, dtype=np.float64).ravel()
    d = np.asarray(disagreement, dtype=np.float64).ravel()
    if h.shape != d.shape or h.size == 0:
        raise ValueError("hesitation and disagreement need one entry per label, and at least one")
    order = np.argsort(h, kind="stable")
    # Agreement 1 − d must not rise with π: a non-increasing fit of agreement in increasing π.
    fitted = _pava_decreasing(1.0 - d[order], np.ones(h.size))
    x = np.asarray(at, dtype=np.float64)
    index = np.clip(np.searchsorted(h[order], x, side="right") - 1, 0, h.size - 1)
    return np.asarray(fitted[index], dtype=np.float64)


__all__ = ["Bin", "Slope", "calibrated_reliability", "hesitation_slope", "reliability_diagram"]
