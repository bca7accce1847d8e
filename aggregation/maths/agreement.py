"""Agreement measures comparable across annotation modes (IFS, binary, Likert): pure numpy, no Django.

The review of the paper objected that IFS agreement was compared with binary and Likert agreement on different
scales. Here every judgment is first projected onto one **signed preference** s ∈ [−1, 1] per (item, annotator),
where **+1 always means "response 0 preferred"**, −1 "response 1 preferred" and 0 no preference:

* binary: choice 0 → +1, choice 1 → −1, tie (−1) → 0 (:func:`signed_preference_binary`);
* side-by-side Likert on points 1..k, 1 = "strongly prefers response 0": s = (centre − c)/half-range
  (:func:`signed_preference_likert`);
* IFS: s = (S_0 − S_1)/2 with S = criterion-weighted μ − ν (:func:`signed_preference_ifs`).

Then the same statistics apply to every mode: Krippendorff's α (interval, on s), α (nominal, on the sign of s with
a tie band, :func:`preference_sign`) and plain pairwise percent agreement with and without ties, each with an
interval over items (:func:`cross_mode_agreement`; the methods and their simulated coverage are in
:mod:`aggregation.maths.intervals`).

Matrices are **units (items) × coders (annotators)**, i.e. annotators on the last axis like everywhere in this
package, with a boolean ``mask`` (True = present); without a mask, NaN marks a missing value. (The ``krippendorff``
package takes the transpose, coders × units.)

Every statistic is a function of sums of per-unit quantities, so it is computed in O(N), never with V×V matrices
over values, and its interval comes from how the per-unit quantities vary across units (items), never from labels
as if they were independent. The generic :func:`bootstrap_ci` (a percentile bootstrap over units) remains for other
statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.ifs import BoolArray, FloatArray
from aggregation.maths.intervals import Interval, cluster_proportion_interval, reliability_interval

# The signed preference s and its sign live in aggregation.maths.signed; their names stay importable from here.
from aggregation.maths.signed import DEFAULT_TIE_BAND as DEFAULT_TIE_BAND
from aggregation.maths.signed import preference_sign as preference_sign
from aggregation.maths.signed import signed_preference_binary as signed_preference_binary
from aggregation.maths.signed import signed_preference_ifs as signed_preference_ifs
from aggregation.maths.signed import signed_preference_likert as signed_preference_likert

#: Label of "no preference" among the signs −1, 0, +1.
TIE_LABEL = 0.0

_BOOTSTRAP_CHUNK_CELLS = 4_000_000
_SMALL_LABEL_RANGE = 1024
_FEW_CATEGORIES = 16
# Above this many distinct labels the public nominal α counts sparsely (a dense units × categories table of 100,000
# units × 500,000 continuous values would need hundreds of gigabytes).
_MANY_CATEGORIES = 256
#: Largest units × categories count table the pairwise figures build (8 bytes a cell: 400 MB); more is refused.
_MAX_TABLE_CELLS = 50_000_000


@dataclass(frozen=True)
class Estimate:
    """A figure with its sample size and, where computed, a confidence interval.

    ``value`` is None when the figure is undefined (no data, zero variance); ``n`` counts what the figure is
    made of (comparisons, pairs, pairable values: each function says which).
    """

    value: float | None
    n: int
    ci: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{"value", "n", "ci": [low, high]}`` with None where undefined: ready for JSON."""
        return {"value": self.value, "n": self.n, "ci": None if self.ci is None else [self.ci[0], self.ci[1]]}


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


# --------------------------------------------------------------------------------------------------------------
# Per-unit sufficient statistics. Each statistic is finalise(Σ_units unit_stats), which makes the point
# estimate O(N) and the bootstrap one matrix product per chunk of replicates.


def _presence(values: FloatArray, mask: ArrayLike | None) -> BoolArray:
    if values.ndim != 2:
        raise ValueError("expected a units × coders matrix")
    if mask is None:
        return ~np.isnan(values)
    present = np.asarray(mask, dtype=bool)
    if present.shape != values.shape:
        raise ValueError(f"mask shape {present.shape} does not match values {values.shape}")
    return present


def _interval_unit_stats(values: ArrayLike, mask: ArrayLike | None) -> FloatArray:
    """Rows (within-unit term, m_u, Σx, Σx²) for the pairable units, x centred on the pooled mean.

    The within term is [2m_u/(m_u − 1)] Σ_i (x_ui − x̄_u)², Krippendorff's observed disagreement of unit u for the
    squared difference metric; centring keeps Σx² − (Σx)²/n free of cancellation in the bootstrap.
    """
    x = np.asarray(values, dtype=np.float64)
    present = _presence(x, mask)
    weight = present.astype(np.float64)
    m = np.einsum("uk->u", weight)
    x = np.where(present, x, 0.0)
    pairable = m >= 2
    if not pairable.all():
        x, weight, m = x[pairable], weight[pairable], m[pairable]
    if m.size:
        x -= np.einsum("uk->", x) / m.sum()
        x *= weight
    unit_sum = np.einsum("uk->u", x)
    unit_sum_sq = np.einsum("uk,uk->u", x, x)
    within = unit_sum_sq - unit_sum * unit_sum / np.maximum(m, 1.0)
    return np.column_stack([2.0 * m / (m - 1.0) * within, m, unit_sum, unit_sum_sq])


def _interval_alpha_from_sums(sums: FloatArray) -> FloatArray:
    within, n, total, total_sq = (sums[..., i] for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = within / n
        expected = 2.0 * (total_sq - total * total / n) / (n - 1.0)
        return np.asarray(1.0 - observed / expected, dtype=np.float64)


def _category_counts(labels: ArrayLike, mask: ArrayLike | None) -> tuple[FloatArray, FloatArray]:
    """n_uc, how many coders gave unit u category c, and the categories (the distinct present labels, sorted)."""
    x = np.asarray(labels, dtype=np.float64)
    present = _presence(x, mask)
    given = x[present]
    if given.size == 0:
        return np.zeros((x.shape[0], 0)), np.zeros(0)
    low, high = given.min(), given.max()
    if high - low < _SMALL_LABEL_RANGE and np.array_equal(given, np.floor(given)):
        # Integer labels in a small range (choices, signs, Likert points): found by counting, not by sorting.
        categories = np.flatnonzero(np.bincount((given - low).astype(np.intp))) + low
    else:
        categories = np.unique(given)
    if x.shape[0] * categories.size > _MAX_TABLE_CELLS:
        raise ValueError(
            f"{categories.size:,} distinct labels on {x.shape[0]:,} units: these look like continuous values, not "
            "categories, and a units × categories table would not fit in memory. Bin or round them first, or use "
            "krippendorff_alpha_interval (continuous) or krippendorff_alpha_nominal (which counts sparsely)."
        )
    if categories.size <= _FEW_CATEGORIES:
        counts = np.stack([np.einsum("uk->u", ((x == c) & present).astype(np.float64)) for c in categories], axis=1)
    else:
        units = np.nonzero(present)[0]
        codes = np.searchsorted(categories, given)
        flat = np.bincount(units * categories.size + codes, minlength=x.shape[0] * categories.size)
        counts = flat.reshape(x.shape[0], categories.size).astype(np.float64)
    return counts, np.asarray(categories, dtype=np.float64)


def _nominal_stats_from_counts(counts: FloatArray) -> FloatArray:
    """Rows (observed-disagreement term, m_u, n_u1 … n_uC) for pairable units.

    The term is Σ_{c≠k} n_uc n_uk/(m_u − 1) = (m_u² − Σ_c n_uc²)/(m_u − 1): the off-diagonal mass of the unit's
    coincidence matrix, with only C (few) categories and no V × V matrix over values.
    """
    # Counts are whole numbers, so these sums are exact in any order: einsum forms them without a per-row reduction.
    m = np.einsum("uc->u", counts)
    pairable = m >= 2
    counts = counts[pairable]
    m = m[pairable]
    term = (m * m - np.einsum("uc,uc->u", counts, counts)) / (m - 1.0)
    return np.column_stack([term, m, counts])


def _nominal_unit_stats(labels: ArrayLike, mask: ArrayLike | None) -> FloatArray:
    return _nominal_stats_from_counts(_category_counts(labels, mask)[0])


def _nominal_alpha_from_sums(sums: FloatArray) -> FloatArray:
    observed_mass = sums[..., 0]
    n = sums[..., 1]
    per_category = sums[..., 2:]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = observed_mass / n
        expected = (n * n - (per_category * per_category).sum(axis=-1)) / (n * (n - 1.0))
        return np.asarray(1.0 - observed / expected, dtype=np.float64)


def _pairwise_stats_from_counts(counts: FloatArray) -> FloatArray:
    """Rows (agreeing pairs, pairs) per unit with at least one pair: Σ_c C(n_uc, 2) and C(m_u, 2)."""
    # Whole numbers again (n(n − 1) is even), so the sums are exact in any order.
    m = np.einsum("uc->u", counts)
    pairs = m * (m - 1.0) / 2.0
    agreeing = np.einsum("uc->u", counts * (counts - 1.0) / 2.0)
    keep = pairs > 0
    return np.column_stack([agreeing[keep], pairs[keep]])


def _pairwise_unit_stats(labels: ArrayLike, mask: ArrayLike | None, with_ties: bool, tie_label: float) -> FloatArray:
    counts, categories = _category_counts(labels, mask)
    if not with_ties:
        # Dropping the tie column drops every pair in which someone chose a tie.
        counts = counts[:, categories != tie_label]
    return _pairwise_stats_from_counts(counts)


def _column_sums(unit_stats: FloatArray) -> FloatArray:
    """``unit_stats.sum(axis=0)``: for a C-ordered (units, columns) block that sum adds the rows one after another,
    and so does einsum, several times faster over a few columns; anything else takes the plain sum.
    """
    if unit_stats.ndim == 2 and unit_stats.shape[1] >= 2 and unit_stats.flags.c_contiguous:
        return np.asarray(np.einsum("uk->k", unit_stats), dtype=np.float64)
    return np.asarray(unit_stats.sum(axis=0), dtype=np.float64)


def _ratio_from_sums(sums: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(sums[..., 0] / sums[..., 1], dtype=np.float64)


# --------------------------------------------------------------------------------------------------------------
# Bootstrap


def percentile_interval(replicates: FloatArray, level: float) -> tuple[float, float] | None:
    """Percentile interval of bootstrap replicates at ``level``, ignoring undefined (non-finite) replicates."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return None
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)


def resample_counts(n_units: int, n_boot: int, seed: int) -> Iterator[FloatArray]:
    """Resampling counts for a bootstrap over ``n_units`` units, in chunks of rows of shape (replicates, units).

    Row b says how often each unit is drawn in replicate b (each row sums to ``n_units``); a statistic that is a
    function of per-unit sums is then ``finalise(counts @ unit_stats)`` for a whole chunk at once. Deterministic
    for a given seed.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, _BOOTSTRAP_CHUNK_CELLS // max(n_units, 1)))
    done = 0
    while done < n_boot:
        rows = min(chunk, n_boot - done)
        draws = rng.integers(0, n_units, size=(rows, n_units))
        offsets = (np.arange(rows) * n_units)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=rows * n_units).reshape(rows, n_units)
        yield counts.astype(np.float64)
        done += rows


IntervalRule = Callable[[FloatArray], Interval | None]


def _ratio_interval(unit_stats: FloatArray) -> Interval | None:
    return cluster_proportion_interval(unit_stats[:, 0], unit_stats[:, 1])


def _alpha_interval_interval(unit_stats: FloatArray) -> Interval | None:
    # Column 1 is m_u, the unit's number of pairable values (see _interval_unit_stats).
    m = float(unit_stats[:, 1].mean()) if unit_stats.shape[0] else 2.0
    return reliability_interval(unit_stats, _interval_alpha_from_sums, values_per_unit=m, variance="jackknife")


def _alpha_nominal_interval(unit_stats: FloatArray) -> Interval | None:
    m = float(unit_stats[:, 1].mean()) if unit_stats.shape[0] else 2.0
    return reliability_interval(unit_stats, _nominal_alpha_from_sums, values_per_unit=m, variance="linearised")


def _estimate_from_unit_stats(
    unit_stats: FloatArray,
    finalise: Callable[[FloatArray], FloatArray],
    n: int,
    interval: IntervalRule | None,
) -> Estimate:
    value = _finite_or_none(float(finalise(_column_sums(unit_stats))))
    ci = interval(unit_stats) if interval is not None and value is not None else None
    return Estimate(value=value, n=n, ci=ci)


def bootstrap_ci(
    statistic: Callable[[Any], float | None],
    units: ArrayLike,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """Percentile bootstrap over units: resample the rows of ``units`` (axis 0) with replacement.

    ``statistic`` receives an array shaped like ``units`` and returns a float; for statistics over several arrays,
    pass ``units=np.arange(n_units)`` and index the arrays inside ``statistic``. Replicates where the statistic
    is undefined (None or NaN) are dropped. Returns ``Estimate(value=statistic(units), n=n_units, ci)``;
    deterministic for a given seed. The library's own agreement figures use a vectorised path (sums of per-unit
    statistics times resampling counts) instead of calling a function per replicate.
    """
    data = np.asarray(units)
    n_units = data.shape[0]

    def evaluate(sample: Any) -> float:
        result = statistic(sample)
        return math.nan if result is None else float(result)

    value = _finite_or_none(evaluate(data)) if n_units else None
    if value is None or n_boot <= 0:
        return Estimate(value=value, n=n_units, ci=None)
    rng = np.random.default_rng(seed)
    replicates = np.array([evaluate(data[rng.integers(0, n_units, size=n_units)]) for _ in range(n_boot)])
    return Estimate(value=value, n=n_units, ci=percentile_interval(replicates, level))


# --------------------------------------------------------------------------------------------------------------
# Public statistics


def krippendorff_alpha_interval(values: ArrayLike, mask: ArrayLike | None = None) -> float:
    """Krippendorff's α for interval data on a units × coders matrix, closed form in O(N).

    Over the n pairable values (units with m_u ≥ 2 values):
    D_o = (1/n) Σ_u [2m_u/(m_u − 1)] Σ_i (x_ui − x̄_u)², D_e = [2/(n − 1)] Σ (x − x̄)², α = 1 − D_o/D_e.
    Equal to ``krippendorff.alpha(values.T, level_of_measurement="interval")``. NaN when undefined (fewer than two
    pairable values, or no variation at all).
    """
    return float(_interval_alpha_from_sums(_column_sums(_interval_unit_stats(values, mask))))


def krippendorff_alpha_nominal(labels: ArrayLike, mask: ArrayLike | None = None) -> float:
    """Krippendorff's α for nominal data on a units × coders matrix, from per-unit category counts.

    Labels are any numbers (categories are their distinct values). Equal to
    ``krippendorff.alpha(labels.T, level_of_measurement="nominal")``; NaN when undefined.
    With many distinct values (continuous data given by mistake) a units × categories table would not fit in
    memory, so the counts are then formed sparsely, over the (unit, category) pairs that occur: O(N log N).
    """
    x = np.asarray(labels, dtype=np.float64)
    present = _presence(x, mask)
    given = x[present]
    if np.unique(given).size <= _MANY_CATEGORIES:
        return float(_nominal_alpha_from_sums(_column_sums(_nominal_unit_stats(x, present))))
    return _nominal_alpha_sparse(x, present)


def _nominal_alpha_sparse(x: FloatArray, present: BoolArray) -> float:
    """The same α from the occurring (unit, category) pairs only; never a units × categories table."""
    units = np.nonzero(present)[0]
    categories, codes = np.unique(x[present], return_inverse=True)
    m = np.bincount(units, minlength=x.shape[0]).astype(np.float64)
    pairable = m[units] >= 2
    units, codes = units[pairable], codes[pairable]
    if units.size < 2:
        return float("nan")
    # n_uc for every pair that occurs, as a run length over the sorted (unit, category) keys.
    keys = np.sort(units.astype(np.int64) * categories.size + codes)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    n_uc = np.diff(np.r_[starts, keys.size]).astype(np.float64)
    pair_unit = keys[starts] // categories.size
    pair_category = keys[starts] % categories.size
    m_u = m[pair_unit]
    n = float(m[m >= 2].sum())
    observed = float(np.sum(n_uc * (m_u - n_uc) / (m_u - 1.0))) / n
    n_c = np.bincount(pair_category, weights=n_uc, minlength=categories.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (n * n - float(np.dot(n_c, n_c))) / (n * (n - 1.0))
        return float(1.0 - observed / expected)


def pairwise_agreement(
    labels: ArrayLike,
    mask: ArrayLike | None = None,
    with_ties: bool = True,
    *,
    tie_label: float = TIE_LABEL,
    interval: bool = False,
) -> Estimate:
    """Share of agreeing pairs: over items, and over unordered pairs of distinct annotators who labelled the item,
    the fraction that chose the same label (pooled: Σ agreeing pairs / Σ pairs, not a mean of per-item shares).

    A tie (``tie_label``, 0 for :func:`preference_sign` output) is an answer of its own; ``with_ties=False`` keeps
    only pairs where neither annotator chose a tie. ``n`` is the number of pairs; with ``interval=True`` the 95 %
    interval over items (agreeing pairs and pairs per item, :func:`intervals.cluster_proportion_interval`) is added.
    """
    stats = _pairwise_unit_stats(labels, mask, with_ties, tie_label)
    n_pairs = int(stats[:, 1].sum())
    return _estimate_from_unit_stats(stats, _ratio_from_sums, n_pairs, _ratio_interval if interval else None)


def pairwise_agreement_per_unit(labels: ArrayLike, mask: ArrayLike | None = None) -> FloatArray:
    """Per unit (item), the share of unordered pairs of its coders that gave the same label, a tie being a label
    of its own; NaN where a unit has fewer than two labels. The per-item counterpart of :func:`pairwise_agreement`
    (with ties), for labels without an IFS distance (binary choices, signs of Likert preferences)."""
    counts, _ = _category_counts(labels, mask)
    m = counts.sum(axis=1)
    pairs = m * (m - 1.0) / 2.0
    agreeing = (counts * (counts - 1.0) / 2.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(pairs > 0, agreeing / pairs, np.nan), dtype=np.float64)


def cross_mode_agreement(
    signed: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    tie_band: float = DEFAULT_TIE_BAND,
    interval: bool = True,
) -> dict[str, Estimate]:
    """The four comparable agreement figures from signed preferences s (units × coders, NaN or mask = missing).

    Keys: ``alpha_interval`` (on s; n = pairable values), ``alpha_nominal`` (on sign(s) with the tie band;
    n = pairable values), ``pairwise_with_ties`` and ``pairwise_without_ties`` (n = pairs). With ``interval`` each
    has a 95 % interval over items (units with at least two judgments): for the two pairwise shares the clustered
    Wilson interval, for the two α a t interval on Fisher's z (:mod:`aggregation.maths.intervals` says why and how well
    each covers).
    """
    s = np.asarray(signed, dtype=np.float64)
    present = _presence(s, mask)
    signs = preference_sign(np.where(present, s, np.nan), tie_band)
    spread = _interval_unit_stats(s, present)
    counts, categories = _category_counts(signs, present)
    nominal = _nominal_stats_from_counts(counts)
    with_ties = _pairwise_stats_from_counts(counts)
    without_ties = _pairwise_stats_from_counts(counts[:, categories != TIE_LABEL])
    return {
        "alpha_interval": _estimate_from_unit_stats(
            spread,
            _interval_alpha_from_sums,
            int(spread[:, 1].sum()),
            _alpha_interval_interval if interval else None,
        ),
        "alpha_nominal": _estimate_from_unit_stats(
            nominal,
            _nominal_alpha_from_sums,
            int(nominal[:, 1].sum()),
            _alpha_nominal_interval if interval else None,
        ),
        "pairwise_with_ties": _estimate_from_unit_stats(
            with_ties, _ratio_from_sums, int(with_ties[:, 1].sum()), _ratio_interval if interval else None
        ),
        "pairwise_without_ties": _estimate_from_unit_stats(
            without_ties, _ratio_from_sums, int(without_ties[:, 1].sum()), _ratio_interval if interval else None
        ),
    }


def units_by_coders(
    unit_ids: ArrayLike, coder_ids: ArrayLike, values: ArrayLike
) -> tuple[FloatArray, BoolArray, NDArray[Any], NDArray[Any]]:
    """Long rows (unit, coder, value) → a units × coders matrix, its mask, and the sorted unit and coder ids.

    A convenience for notebooks and imports. A repeated (unit, coder) pair raises: pick one judgment first.
    """
    units, unit_index = np.unique(np.asarray(unit_ids), return_inverse=True)
    coders, coder_index = np.unique(np.asarray(coder_ids), return_inverse=True)
    unit_index = unit_index.ravel()
    coder_index = coder_index.ravel()
    flat = unit_index * len(coders) + coder_index
    if np.unique(flat).size != flat.size:
        raise ValueError("a coder judged the same unit more than once")
    matrix = np.full((len(units), len(coders)), np.nan)
    present = np.zeros(matrix.shape, dtype=bool)
    matrix[unit_index, coder_index] = np.asarray(values, dtype=np.float64)
    present[unit_index, coder_index] = True
    return matrix, present, units, coders


__all__ = [
    "DEFAULT_TIE_BAND",
    "TIE_LABEL",
    "Estimate",
    "bootstrap_ci",
    "cross_mode_agreement",
    "krippendorff_alpha_interval",
    "krippendorff_alpha_nominal",
    "pairwise_agreement",
    "pairwise_agreement_per_unit",
    "percentile_interval",
    "preference_sign",
    "resample_counts",
    "signed_preference_binary",
    "signed_preference_ifs",
    "signed_preference_likert",
    "units_by_coders",
]
