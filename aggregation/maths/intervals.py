"""Confidence intervals that treat items, not labels, as the independent units. Pure numpy, no Django.

Several labels of one item are not independent: they share the item's difficulty, and a pair-based figure builds
three pairs from three labels. An interval that counts labels as independent is too narrow: in simulated projects
with 2-5 labels per item the label-level Wilson interval of blind agreement covered the truth 87 % of the time at a
stated 95 %. Every figure here is a smooth function of per-item sums, so each interval comes from how those sums
vary across items. All are closed forms over the per-item sums: deterministic, no resampling, O(items). Why these
methods and not an item bootstrap: the percentile bootstrap over items, which the pair, α and gap figures used,
covered 88-95 % in the same simulations (it is too narrow with a few dozen items, worst for human-human pairs and
for the gap near the handoff threshold), and the closed forms below cover 94-96 %
(tests/maths/test_intervals_cover_at_95.py checks every interval over 2,000 simulated projects per scenario).

* **Proportions** (blind, shown and model-vs-gold agreement; pairwise agreement = agreeing pairs / pairs):
  :func:`cluster_proportion_interval`. The ratio estimator R = Σ y_i / Σ n_i over K items has the cluster-robust
  (linearisation) variance v = K/(K−1) Σ_i (y_i − R n_i)² / (Σ n_i)², the survey-sampling variance of a ratio;
  n_eff = R(1 − R)/v is the binomial-equivalent count (Kish's n/deff), and the Wilson score interval on n_eff keeps
  the interval inside [0, 1] and honest near 0 and 1, where a Wald interval undercovers (the handoff threshold sits
  at 0.9). As in Korn and Graubard (1998), n_eff is scaled by (t_{n−1}/t_{K−1})² because the design effect is
  itself estimated from only K items, and capped at n (a design effect below 1 is noise here: labels of one item
  are never less alike than labels of different items). When R is 0 or 1, v says nothing about the clustering and
  n_eff is the number of items (as if every label of an item copied the first): the cautious choice.
* **Differences of proportions** (the anchoring gap, shown − blind): :func:`cluster_difference_interval`, Zou and
  Donner's MOVER from the two proportion intervals (Newcombe's hybrid score interval when the sides share no item),
  with the correlation of the two ratios from the per-item linearisation, so an item with labels on both sides (a
  shown revision of a blind label) keeps its pairing. A Wald interval on the same variance covered 92-93 %.
* **Krippendorff's α** (interval and nominal): :func:`reliability_interval`, a t interval (K − 1 df) on Fisher's z
  for an intraclass correlation, z = ½ log[(1 + (m − 1)α)/(1 − α)], mapped back, so it never passes α = 1 and is
  close to symmetric where α's own distribution is skewed. Interval α takes the delete-one-item jackknife standard
  error; nominal α the linearised one. Both were measured for both: the jackknife overstates nominal α's variance
  at high agreement (96.7 % coverage), the linearisation understates interval α's with 8-20 items (92.6 %); each
  figure takes the one that covers.

At 20 items per figure (tests/maths/small_project_simulation.py) every interval covers 93.7-96.5 % except at the
top edge of [0, 1]: model vs gold at 0.97 (97.7 %, binomial discreteness: no interval lands between 88 % and 97.9 %
there), shown agreement at 0.93 and nominal α at 0.76 (97.1-97.4 %, all misses above the truth: 20 clustered items
cannot lift an honest lower limit past it). docs/guides/conclusions.md has the table and the alternatives measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
Interval = tuple[float, float]


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie in (0, 1)")


def _t_within(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with ``df`` (integer) degrees of freedom: the finite series of Abramowitz &
    Stegun 26.7.3-4, exact for integer df."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, 1.0
        if df > 1:
            total = term
            for k in range(1, (df - 3) // 2 + 1):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
        return 2.0 / math.pi * (theta + (s * math.cos(theta) * total if df > 1 else 0.0))
    total = term = 1.0
    for k in range(1, (df - 2) // 2 + 1):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


def t_upper_tail(t: float, df: int) -> float:
    """P(T ≥ t) for Student's t with ``df`` degrees of freedom (scipy's ``t.sf``): the one-sided p-value."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = (1.0 - _t_within(abs(t), df)) / 2.0
    return tail if t >= 0 else 1.0 - tail


@lru_cache(maxsize=1024)
def t_quantile(level: float, df: int) -> float:
    """Two-sided Student t quantile: t with P(|T| ≤ t) = ``level`` on ``df`` degrees of freedom (scipy's
    ``t.ppf(0.5 + level/2, df)``). Up to 200 df by bisection on the exact series; above, the Cornish-Fisher
    expansion in 1/df (Abramowitz & Stegun 26.7.5), whose error there is below 1e-9. Hand-written because the
    project does not depend on scipy."""
    _check_level(level)
    if df < 1:
        raise ValueError("df must be at least 1")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    if df > 200:
        g1 = (z**3 + z) / 4.0
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
        g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160.0
        return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
    low, high = z, z
    while _t_within(high, df) < level:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if _t_within(mid, df) < level:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * high:
            break
    return (low + high) / 2.0


def _per_unit(successes: ArrayLike, trials: ArrayLike) -> tuple[FloatArray, FloatArray]:
    y = np.asarray(successes, dtype=np.float64).ravel()
    n = np.asarray(trials, dtype=np.float64).ravel()
    if y.shape != n.shape:
        raise ValueError("successes and trials need one entry per unit")
    keep = n > 0
    return y[keep], n[keep]


def wilson(p: float, n: float, z: float) -> Interval:
    """Wilson score interval for a proportion ``p`` from ``n`` (possibly fractional, effective) trials."""
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half_width = z * math.sqrt(max(p * (1.0 - p), 0.0) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def _ratio_parts(y: FloatArray, n: FloatArray) -> tuple[float, FloatArray, float]:
    """The ratio Σy/Σn, each unit's linearised contribution (y_i − R n_i)/Σn, and its cluster-robust variance."""
    units = y.size
    total = float(n.sum())
    ratio = float(y.sum()) / total
    influence = (y - ratio * n) / total
    return ratio, influence, units / (units - 1.0) * float(influence @ influence)


def cluster_proportion_interval(successes: ArrayLike, trials: ArrayLike, level: float = 0.95) -> Interval | None:
    """Interval for Σ successes / Σ trials when units (items) hold several trials each: Wilson on the effective
    sample size from the cluster-robust variance of the ratio, with the Korn-Graubard degrees-of-freedom
    adjustment (module docstring).

    ``successes`` and ``trials`` have one entry per unit (units without trials are ignored). None without trials.
    With one unit there is no between-unit variation to measure: the interval is [0, 1].
    """
    _check_level(level)
    y, n = _per_unit(successes, trials)
    units = y.size
    total = float(n.sum())
    if units == 0 or total <= 0.0:
        return None
    if units == 1:
        return 0.0, 1.0
    ratio, _, variance = _ratio_parts(y, n)
    binomial = ratio * (1.0 - ratio)
    # Design effect ≥ 1 (the cap at the trials); no clustering information at 0 or 1 (then one trial per unit).
    effective = float(units) if variance <= 0.0 or binomial <= 0.0 else min(binomial / variance, total)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    df_adjustment = t_quantile(level, max(round(total) - 1, 1)) / t_quantile(level, units - 1)
    return wilson(ratio, effective * df_adjustment**2, z)


def cluster_difference_interval(
    first: tuple[ArrayLike, ArrayLike], second: tuple[ArrayLike, ArrayLike], level: float = 0.95
) -> Interval | None:
    """Interval for R₁ − R₂, each R = Σ successes / Σ trials over the same units (zero trials where a unit has
    none on that side): Zou and Donner's MOVER (Newcombe's hybrid score interval when the sides share no unit)
    from the two :func:`cluster_proportion_interval` intervals, with their correlation from the per-unit
    linearisation, so an item with labels on both sides keeps its pairing. None when a side is empty.
    """
    _check_level(level)
    y1, n1 = (np.asarray(a, dtype=np.float64).ravel() for a in first)
    y2, n2 = (np.asarray(a, dtype=np.float64).ravel() for a in second)
    if not y1.shape == n1.shape == y2.shape == n2.shape:
        raise ValueError("both sides need one entry per unit")
    ci1 = cluster_proportion_interval(y1, n1, level)
    ci2 = cluster_proportion_interval(y2, n2, level)
    if ci1 is None or ci2 is None:
        return None
    r1, r2 = float(y1.sum() / n1.sum()), float(y2.sum() / n2.sum())
    used = (n1 > 0) | (n2 > 0)
    correlation = 0.0
    if used.sum() > 1:
        _, influence1, variance1 = _ratio_parts(y1[used], n1[used])
        _, influence2, variance2 = _ratio_parts(y2[used], n2[used])
        if variance1 > 0.0 and variance2 > 0.0:
            covariance = float(influence1 @ influence2) * used.sum() / (used.sum() - 1.0)
            correlation = max(-1.0, min(1.0, covariance / math.sqrt(variance1 * variance2)))
    difference = r1 - r2
    low_gap = (r1 - ci1[0]) ** 2 + (ci2[1] - r2) ** 2 - 2.0 * correlation * (r1 - ci1[0]) * (ci2[1] - r2)
    high_gap = (ci1[1] - r1) ** 2 + (r2 - ci2[0]) ** 2 - 2.0 * correlation * (ci1[1] - r1) * (r2 - ci2[0])
    return (
        max(-1.0, difference - math.sqrt(max(low_gap, 0.0))),
        min(1.0, difference + math.sqrt(max(high_gap, 0.0))),
    )


def reliability_interval(
    unit_stats: FloatArray,
    finalise: Callable[[FloatArray], FloatArray],
    level: float = 0.95,
    *,
    values_per_unit: float = 2.0,
    variance: Literal["jackknife", "linearised"] = "jackknife",
) -> Interval | None:
    """Interval for a reliability coefficient (Krippendorff's α) computed as ``finalise(Σ unit_stats)``: a t
    interval (units − 1 df) on Fisher's z for an intraclass correlation, z = ½ log[(1 + (m − 1)α)/(1 − α)] with
    m = ``values_per_unit`` (the mean number of values of a pairable unit), mapped back to α.

    The standard error of z over units (items) is the delete-one-unit jackknife (``variance="jackknife"``; each
    leave-one-out value is ``finalise`` of the total minus one row, all in one vectorised call) or the
    linearisation (``"linearised"``, the infinitesimal jackknife: the gradient of z(finalise) at the total, by
    central differences, applied to each unit's centred row). The module docstring says which figure uses which.
    None when the figure is undefined or there are fewer than two units. Leave-one-out values outside z's domain
    (leaving one item out can leave no disagreement, α = 1) are clipped to its finite edge.
    """
    _check_level(level)
    stats = np.asarray(unit_stats, dtype=np.float64)
    units = stats.shape[0]
    if units < 2:
        return None
    total = stats.sum(axis=0)
    value = float(finalise(total))
    c = max(float(values_per_unit) - 1.0, 1.0)
    floor = -1.0 / c
    if not math.isfinite(value) or not floor < value < 1.0:
        return None
    edge = 1e-9

    def z(alpha: FloatArray) -> FloatArray:
        a = np.clip(np.where(np.isfinite(alpha), alpha, value), floor + edge, 1.0 - edge)
        return np.asarray(0.5 * np.log((1.0 + c * a) / (1.0 - a)), dtype=np.float64)

    with np.errstate(invalid="ignore", divide="ignore"):
        if variance == "jackknife":
            leave_out = z(np.asarray(finalise(total[None, :] - stats), dtype=np.float64))
            spread = leave_out - leave_out.mean()
            se = math.sqrt((units - 1.0) / units * float(spread @ spread))
        elif variance == "linearised":
            step = 1e-6 * np.maximum(np.abs(total), 1.0)
            shifts = np.diag(step)
            gradient = (z(finalise(total[None, :] + shifts)) - z(finalise(total[None, :] - shifts))) / (2.0 * step)
            influence = (stats - stats.mean(axis=0)) @ gradient
            se = math.sqrt(units / (units - 1.0) * float(influence @ influence))
        else:
            raise ValueError(f"unknown variance {variance!r}")
    half_width = t_quantile(level, units - 1) * se
    centre = float(z(np.asarray(value)))

    def back(x: float) -> float:
        e = math.exp(2.0 * x)
        return (e - 1.0) / (e + c)

    return back(centre - half_width), back(centre + half_width)


__all__ = [
    "cluster_difference_interval",
    "cluster_proportion_interval",
    "reliability_interval",
    "t_quantile",
    "t_upper_tail",
    "wilson",
]
