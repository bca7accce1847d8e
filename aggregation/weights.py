"""Annotator weights: the paper's Eq. (8) and an iterative consensus weighting. Pure numpy, no Django.

Inputs follow :mod:`aggregation.ifs`: ``mu``, ``nu`` of shape (items, responses, annotators) or (items, responses,
criteria, annotators) with a boolean ``mask`` (True = present). Here the last axis must index the **same
annotator on every item** (a project's annotators), not an arbitrary slot, because the weights are per annotator.

Both schemes return weights normalised to sum 1 over annotators, ready for ``w=`` of the operators.

Eq. (8): w = α·consistency + β·expertise + γ·agreement with α + β + γ = 1, each part in [0, 1]:

* **consistency**: 1 − mean Szmidt-Kacprzyk distance between an annotator's judgment and their own repeat of it
  (``repeat_mu``/``repeat_nu``/``repeat_mask``, same shape, the second judgment of the same cell). The paper's
  "1 − variance of hesitation" is available as ``consistency_source="hesitation_variance"``; it is a weak proxy
  (it measures how evenly someone hesitates, not whether they repeat themselves, and var π ≤ 1/4 confines it to
  [0.75, 1]), and a quality score built from hesitation must not then be "found" to correlate with hesitation.
* **expertise**: accuracy on gold items: the share of gold items whose gold preference (response index, or −1 for
  a tie) equals the annotator's preferred response, read from their criterion-weighted scores S = μ − ν with a
  tie when the top two differ by less than ``tolerance``.
* **agreement**: 1 − mean distance between an annotator's values and the leave-one-out consensus (plain mean) of
  the other annotators of the same cell.

Missing parts are explicit: a part an annotator has no data for (no repeats, no gold items, nobody to agree with)
is NaN, and that annotator's remaining coefficients are renormalised to sum 1. So an annotator without gold items
is weighted on consistency and agreement alone, rather than being scored zero for expertise. An annotator with no
usable part at all gets weight 0; when no annotator has one, weights fall back to uniform over the annotators with
judgments (``fallback_uniform``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.ifs import (
    IFS,
    UNDEFINED,
    BoolArray,
    FloatArray,
    IntArray,
    _any_value,
    combine_criterion_values,
    preferred_response,
    score,
    validate_ifs,
)

_Scalar = TypeVar("_Scalar", bound=np.generic)
ConsistencySource = Literal["repeats", "hesitation_variance", "none"]
DEFAULT_COEFFICIENTS = (1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)
#: Strength of the consensus weighting's pull toward equal weight, in pseudo-items (see
#: :func:`iterative_consensus_weights`). Ten because an annotator's mean squared distance over n items has a
#: relative standard error of about √(2/n) (a χ² with n degrees of freedom): 45 % at 10 items, where their own
#: figure starts to mean something, 100 % at 2. Below ten labels the prior dominates, above it their own items do;
#: with hundreds of labels per annotator it changes weights by a few per cent.
DEFAULT_PRIOR_ITEMS = 10


@dataclass(frozen=True)
class AnnotatorWeights:
    """Per-annotator arrays (length = annotators). Parts are NaN where the annotator has no data for them.

    ``quality`` is the coefficient-weighted mean of the available parts, ``weight`` the qualities normalised to sum
    1. Counts: ``n_values`` judgments given, ``n_gold`` gold items with a readable preference, ``n_repeats``
    values with a repeat (or, for the hesitation proxy, the values it was computed on).
    """

    weight: FloatArray
    quality: FloatArray
    consistency: FloatArray
    expertise: FloatArray
    agreement: FloatArray
    n_values: IntArray
    n_gold: IntArray
    n_repeats: IntArray
    coefficients: tuple[float, float, float]
    consistency_source: ConsistencySource
    fallback_uniform: bool

    def as_rows(self) -> list[dict[str, Any]]:
        """One dict per annotator index, NaN as None: for storage and JSON."""

        def clean(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return [
            {
                "annotator": i,
                "weight": float(self.weight[i]),
                "quality": clean(self.quality[i]),
                "consistency": clean(self.consistency[i]),
                "expertise": clean(self.expertise[i]),
                "agreement": clean(self.agreement[i]),
                "n_values": int(self.n_values[i]),
                "n_gold": int(self.n_gold[i]),
                "n_repeats": int(self.n_repeats[i]),
            }
            for i in range(self.weight.shape[0])
        ]


def _per_annotator_mean(values: FloatArray, usable: BoolArray) -> tuple[FloatArray, IntArray]:
    """Mean of ``values`` over every axis but the last, counting only ``usable`` entries; NaN where none."""
    counted = _cells(usable).astype(np.float64)
    total = np.einsum("ck,ck->k", _cells(np.where(usable, values, 0.0)), counted)
    count = np.einsum("ck->k", counted)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / count, dtype=np.float64), count.astype(np.int64)


def _sk_distance(d_mu: FloatArray, d_nu: FloatArray) -> FloatArray:
    # √(½[(Δμ)² + (Δν)² + (Δπ)²]) with Δπ = −(Δμ + Δν).
    return np.asarray(np.sqrt(d_mu * (d_mu + d_nu) + d_nu * d_nu), dtype=np.float64)


def _check_shape(mu: FloatArray) -> None:
    if mu.ndim not in (3, 4):
        raise ValueError("expected (items, responses, annotators) or (items, responses, criteria, annotators)")


def _cells(x: NDArray[_Scalar]) -> NDArray[_Scalar]:
    """(…, annotators) → (cells, annotators), a view when possible."""
    return x.reshape(-1, x.shape[-1])


def leave_one_out_agreement(mu: ArrayLike, nu: ArrayLike, mask: ArrayLike | None = None) -> FloatArray:
    """Per annotator: 1 − mean distance to the plain mean of the *other* annotators of each cell (NaN if alone).

    No loop over annotators: with m annotators in a cell, own − mean(others) = m/(m − 1)·(own − mean(all)), and
    the distance is linear in that residual, so one mean per cell suffices.
    """
    mu_a = np.asarray(mu, dtype=np.float64)
    nu_a = np.asarray(nu, dtype=np.float64)
    present = np.ones(mu_a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return _leave_one_out_agreement(
        _cells(present).astype(np.float64),
        _cells(np.where(present, mu_a, 0.0)),
        _cells(np.where(present, nu_a, 0.0)),
    )


def _leave_one_out_agreement(weight: FloatArray, mu_f: FloatArray, nu_f: FloatArray) -> FloatArray:
    """:func:`leave_one_out_agreement` on (cells, annotators) blocks, zero where absent (``weight`` 0)."""
    count = np.einsum("ck->c", weight)
    has_others = count > 1.0
    per_cell = np.maximum(count, 1.0)
    d_mu = mu_f - (np.einsum("ck->c", mu_f) / per_cell)[:, None]
    d_nu = nu_f - (np.einsum("ck->c", nu_f) / per_cell)[:, None]
    # √(Δμ(Δμ + Δν) + (Δν)²), computed in place: this block is the size of the whole project.
    distance = np.add(d_mu, d_nu)
    np.multiply(distance, d_mu, out=distance)
    np.multiply(d_nu, d_nu, out=d_nu)
    np.add(distance, d_nu, out=distance)
    np.sqrt(distance, out=distance)
    np.multiply(distance, weight, out=distance)
    scale = np.where(has_others, count / np.maximum(count - 1.0, 1.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_distance = np.einsum("ck,c->k", distance, scale) / np.einsum(
            "ck,c->k", weight, has_others.astype(np.float64)
        )
    return np.asarray(1.0 - mean_distance, dtype=np.float64)


def annotator_preferences(
    mu: ArrayLike,
    nu: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    criterion_weights: ArrayLike | None = None,
    tolerance: float = 0.1,
) -> IntArray:
    """Each annotator's preferred response per item, shape (items, annotators).

    From criterion-weighted S = μ − ν; ``TIE`` (−1) within ``tolerance``, ``UNDEFINED`` (−2) unless the annotator
    gave every value of the item.
    """
    mu_a = np.asarray(mu, dtype=np.float64)
    nu_a = np.asarray(nu, dtype=np.float64)
    _check_shape(mu_a)
    scores = score(mu_a, nu_a)
    if mask is not None:
        # NaN flows through the criteria sum, so a partly judged item has no preference.
        scores = np.where(np.asarray(mask, dtype=bool), scores, np.nan)
    if scores.ndim == 4:
        scores = combine_criterion_values(scores, criterion_weights, axis=2)
    return preferred_response(scores, tolerance, axis=1)


def _expertise(preferences: IntArray, gold: ArrayLike | None) -> tuple[FloatArray, IntArray]:
    n_annotators = preferences.shape[-1]
    if gold is None:
        return np.full(n_annotators, np.nan), np.zeros(n_annotators, dtype=np.int64)
    gold_a = np.asarray(gold, dtype=np.int64)
    if gold_a.shape != (preferences.shape[0],):
        raise ValueError(f"gold must have one entry per item ({preferences.shape[0]}), got {gold_a.shape}")
    usable = (gold_a[:, None] >= -1) & (preferences != UNDEFINED)
    correct = (preferences == gold_a[:, None]).astype(np.float64)
    return _per_annotator_mean(correct, usable)


def _consistency(
    mu: FloatArray,
    nu: FloatArray,
    present: BoolArray,
    source: ConsistencySource,
    repeat_mu: ArrayLike | None,
    repeat_nu: ArrayLike | None,
    repeat_mask: ArrayLike | None,
) -> tuple[FloatArray, IntArray]:
    n_annotators = mu.shape[-1]
    missing = np.full(n_annotators, np.nan), np.zeros(n_annotators, dtype=np.int64)
    if source == "none":
        return missing
    if source == "hesitation_variance":
        pi = 1.0 - mu - nu
        mean_pi, count = _per_annotator_mean(pi, present)
        mean_sq, _ = _per_annotator_mean(pi * pi, present)
        variance = np.where(count >= 2, mean_sq - mean_pi * mean_pi, np.nan)
        return 1.0 - variance, count
    if source != "repeats":
        raise ValueError(f"unknown consistency_source {source!r}")
    if repeat_mu is None or repeat_nu is None:
        return missing
    again_mu = np.asarray(repeat_mu, dtype=np.float64)
    again_nu = np.asarray(repeat_nu, dtype=np.float64)
    if again_mu.shape != mu.shape or again_nu.shape != mu.shape:
        raise ValueError("repeat judgments must have the shape of the judgments they repeat")
    repeated = np.ones(mu.shape, dtype=bool) if repeat_mask is None else np.asarray(repeat_mask, dtype=bool)
    both = present & repeated
    validate_ifs(again_mu, again_nu, both)
    with np.errstate(invalid="ignore"):
        d = _sk_distance(mu - again_mu, nu - again_nu)
    mean_distance, count = _per_annotator_mean(d, both)
    return 1.0 - mean_distance, count


def _check_coefficients(coefficients: tuple[float, float, float]) -> tuple[float, float, float]:
    c = tuple(float(x) for x in coefficients)
    if len(c) != 3 or any(not (x >= 0.0) for x in c) or abs(sum(c) - 1.0) > 1e-6:
        raise ValueError("coefficients (alpha, beta, gamma) must be non-negative and sum to 1")
    return c[0], c[1], c[2]


def _normalise(quality: FloatArray, judged: BoolArray) -> tuple[FloatArray, bool]:
    usable = np.isfinite(quality) & judged
    total = float(np.where(usable, quality, 0.0).sum())
    if total > 0.0:
        return np.where(usable, quality, 0.0) / total, False
    base = judged if judged.any() else np.ones_like(judged)
    return base / base.sum(), True


def annotator_weights(
    mu: ArrayLike,
    nu: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    coefficients: tuple[float, float, float] = DEFAULT_COEFFICIENTS,
    gold: ArrayLike | None = None,
    criterion_weights: ArrayLike | None = None,
    tolerance: float = 0.1,
    repeat_mu: ArrayLike | None = None,
    repeat_nu: ArrayLike | None = None,
    repeat_mask: ArrayLike | None = None,
    consistency_source: ConsistencySource = "repeats",
) -> AnnotatorWeights:
    """Paper Eq. (8): w = α·consistency + β·expertise + γ·agreement, normalised to sum 1 over annotators.

    ``coefficients`` = (α, β, γ), summing to 1. ``gold`` has one entry per item: the gold preferred response
    index, −1 for a gold tie, ``ifs.UNDEFINED`` (−2) for items without gold. ``tolerance`` is the score gap under
    which an annotator's judgment reads as a tie. See the module docstring for the parts and how missing parts
    are renormalised away; ``quality`` is the combined score in [0, 1] before normalisation.
    """
    coeffs = _check_coefficients(coefficients)
    mu_a = np.asarray(mu, dtype=np.float64)
    nu_a = np.asarray(nu, dtype=np.float64)
    _check_shape(mu_a)
    present = np.ones(mu_a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    validate_ifs(mu_a, nu_a, present)
    mu_f = np.where(present, mu_a, 0.0)
    nu_f = np.where(present, nu_a, 0.0)

    consistency, n_repeats = _consistency(mu_f, nu_f, present, consistency_source, repeat_mu, repeat_nu, repeat_mask)
    preferences = annotator_preferences(mu_a, nu_a, present, criterion_weights=criterion_weights, tolerance=tolerance)
    expertise, n_gold = _expertise(preferences, gold)
    present_cells = _cells(present).astype(np.float64)
    agreement = _leave_one_out_agreement(present_cells, _cells(mu_f), _cells(nu_f))

    parts = np.stack([consistency, expertise, agreement])
    weights = np.asarray(coeffs)[:, None]
    available = np.isfinite(parts) & (weights > 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        quality = (np.where(available, parts, 0.0) * weights).sum(axis=0) / np.where(available, weights, 0.0).sum(
            axis=0
        )
    n_values = np.einsum("ck->k", present_cells).astype(np.int64)
    weight, fallback = _normalise(quality, n_values > 0)
    return AnnotatorWeights(
        weight=weight,
        quality=quality,
        consistency=consistency,
        expertise=expertise,
        agreement=agreement,
        n_values=n_values,
        n_gold=n_gold,
        n_repeats=n_repeats,
        coefficients=coeffs,
        consistency_source=consistency_source,
        fallback_uniform=fallback,
    )


# --------------------------------------------------------------------------------------------------------------
# Iterative consensus weighting


def _regularised_upper_gamma(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x)/Γ(a): series below a + 1, Lentz continued fraction above (converge in O(√a) steps)."""
    if x <= 0.0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        denominator = a
        for _ in range(100_000):
            denominator += 1.0
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = d if abs(d) > tiny else tiny
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return math.exp(log_prefactor) * h


def chi2_isf(p: float, dof: int) -> float:
    """Upper quantile of the χ² distribution: x with P(X > x) = p for X ~ χ²(dof) (scipy's ``chi2.isf``).

    Newton's method on the regularised incomplete gamma function from the Wilson-Hilferty approximation,
    safeguarded by bisection; accurate to about 1e-10 relative. Needed for the RASA reliability prior without
    depending on scipy.
    """
    if not 0.0 < p < 1.0 or dof <= 0:
        raise ValueError("need 0 < p < 1 and dof >= 1")
    k = float(dof)
    z = NormalDist().inv_cdf(1.0 - p)
    x = max(k * (1.0 - 2.0 / (9.0 * k) + z * math.sqrt(2.0 / (9.0 * k))) ** 3, 1e-8)
    low, high = 0.0, math.inf
    half = k / 2.0
    for _ in range(200):
        excess = _regularised_upper_gamma(half, x / 2.0) - p
        if excess > 0.0:
            low = x
        else:
            high = x
        density = math.exp((half - 1.0) * math.log(x / 2.0) - x / 2.0 - math.lgamma(half)) / 2.0
        candidate = x + excess / density if density > 0.0 else math.nan
        if not low < candidate < high:
            candidate = (low + high) / 2.0 if math.isfinite(high) else 2.0 * x
        if abs(candidate - x) <= 1e-13 * max(x, 1.0):
            return candidate
        x = candidate
    return x


@dataclass(frozen=True)
class ConsensusWeights:
    """Result of :func:`iterative_consensus_weights`.

    ``weight`` sums to 1 over annotators; ``reliability`` is the unnormalised β (crowd-kit's ``skills_``);
    ``consensus`` the final weighted mean (items, responses[, criteria]); ``loss_history`` the relative squared
    change of the consensus per iteration, the convergence criterion.
    """

    weight: FloatArray
    reliability: FloatArray
    consensus: IFS
    iterations: int
    converged: bool
    loss_history: tuple[float, ...]


def iterative_consensus_weights(
    mu: ArrayLike,
    nu: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    alpha: float = 0.05,
    max_iter: int = 100,
    tol: float = 1e-9,
    distance: Literal["euclidean", "szmidt_kacprzyk"] = "euclidean",
    chi2_prior: bool = True,
    exclude_self: bool = True,
    min_total_distance: float = 1e-5,
    prior_items: int = DEFAULT_PRIOR_ITEMS,
) -> ConsensusWeights:
    """Weights from distance to the weighted consensus, repeated to a fixed point.

    Starting from equal reliabilities β = 1, repeat: (1) consensus = weighted mean of the judgments with weights
    β; (2) β_k = χ²_{α/2}(|V_k|) / max(Σ_i D_ik, ``min_total_distance``), where V_k is the set of items annotator
    k judged and D_ik the squared distance between their values for item i and the consensus. Stop when the
    relative squared change of the consensus, Σ(Δ)²/Σ consensus², falls below ``tol`` (``converged``), or after
    ``max_iter`` updates.

    This is the reliability update of Li (2019), as implemented by crowd-kit's ``RASA`` (Reliability Aware
    Sequence Aggregation), an item's embedding being the vector of its (μ, ν) values over responses and criteria.
    With ``exclude_self=False``, ``distance="euclidean"`` (D = Σ (Δμ² + Δν²)) and ``chi2_prior=True`` the
    normalised weights are comparable with ``RASA(n_iter=max_iter, tol=tol, alpha=alpha).fit(df).skills_``
    (normalised) on fully observed items.

    The default ``exclude_self=True`` measures each annotator against the weighted consensus of the *others*.
    With self-inclusion the update feeds back on itself: an annotator slightly above the rest pulls the consensus
    towards themselves, looks closer, gains weight, and on data with several equally careful annotators the fixed
    point gives one of them nearly all the weight. Excluding oneself removes that loop. ``distance=
    "szmidt_kacprzyk"`` uses D = Σ ½(Δμ² + Δν² + Δπ²); ``chi2_prior=False`` drops the χ² numerator (plain inverse
    distance). The χ² quantile grows with |V_k|, rewarding annotators whose distance sum rests on more items.

    **Shrinkage toward equal weight** (``prior_items`` = τ, default :data:`DEFAULT_PRIOR_ITEMS`): each annotator's
    distance sum is pooled with τ pseudo-items at the project's mean per-item distance d̄ (over every annotator's
    items with company), β_k = χ²_{α/2}(|V_k| + τ) / (Σ_i D_ik + τ·d̄). It is the conjugate (inverse-gamma) prior
    on an annotator's noise variance, centred on everybody's: an annotator with few labels is taken to be about
    as reliable as the rest until their own items say otherwise, and their own evidence outweighs the prior once
    they have labelled more than τ items. Without it the rule is degenerate on sparse data: six labels on items
    where the others happened to be unanimous give Σ D = 0, so β hits the ``min_total_distance`` floor and that
    annotator takes 0.9998 of the weight. ``prior_items=0`` is the plain rule, crowd-kit's RASA.
    """
    if distance not in ("euclidean", "szmidt_kacprzyk"):
        raise ValueError(f"unknown distance {distance!r}")
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    mu_a = np.asarray(mu, dtype=np.float64)
    nu_a = np.asarray(nu, dtype=np.float64)
    if mu_a.ndim < 2:
        raise ValueError("expected shape (items, ..., annotators)")
    present = np.ones(mu_a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    validate_ifs(mu_a, nu_a, present)
    n_annotators = mu_a.shape[-1]
    # Whole-number counts: exact whichever way they are formed.
    on_item = _any_value(present.reshape(mu_a.shape[0], -1, n_annotators))
    n_items_judged = np.count_nonzero(on_item, axis=0).astype(np.int64)
    if prior_items < 0:
        raise ValueError("prior_items must be at least 0")
    if chi2_prior:
        quantiles = {int(k): chi2_isf(alpha / 2.0, int(k) + prior_items) for k in np.unique(n_items_judged) if k > 0}
        prior = np.array([quantiles.get(int(k), 0.0) for k in n_items_judged])
    else:
        prior = (n_items_judged > 0).astype(np.float64)
    # Items on which an annotator has company: the ones whose distance to a consensus of others is measured.
    on_item_count = np.count_nonzero(on_item, axis=1)
    with_company = np.count_nonzero(on_item & (on_item_count > 1)[:, None], axis=0).astype(np.float64)

    # Everything below works annotator-first, on (annotators, cells) blocks with zeros where absent: per-cell
    # figures then broadcast along long contiguous rows instead of across a short trailing axis, each weighted sum
    # over annotators is one matrix-vector product (reliability @ block), and each sum over cells runs along a
    # contiguous row. Only the three input blocks are transposed, once.
    present_t = np.ascontiguousarray(_cells(present).T)
    weight_t = present_t.astype(np.float64)
    mu_t = np.ascontiguousarray(_cells(mu_a).T)
    nu_t = np.ascontiguousarray(_cells(nu_a).T)
    # Absent entries may hold anything (NaN included): zero them, so that they weigh nothing in the products.
    np.copyto(mu_t, 0.0, where=~present_t)
    np.copyto(nu_t, 0.0, where=~present_t)

    def consensus_of(reliability: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        total = np.asarray(reliability @ weight_t, dtype=np.float64)
        safe = np.where(total > 0.0, total, 1.0)
        return (
            np.asarray(reliability @ mu_t, dtype=np.float64) / safe,
            np.asarray(reliability @ nu_t, dtype=np.float64) / safe,
            total,
        )

    # Reliabilities stay positive for everyone who judged anything, so which entries have company in their cell
    # (and so an "others' consensus") never changes: fix it once.
    if exclude_self:
        # Whole-number counts: exact in any order.
        company = np.count_nonzero(present_t, axis=0) > 1
        counted_t = np.logical_and(present_t, company).astype(np.float64)
    else:
        counted_t = weight_t
    # Scratch blocks reused by every iteration: the loop is memory-bound, and fresh 8-byte × cells × annotators
    # temporaries cost as much as the arithmetic.
    d_mu, d_nu, squared = np.empty_like(mu_t), np.empty_like(nu_t), np.empty_like(mu_t)

    def shrunk(distance_total: FloatArray) -> FloatArray:
        """β from each annotator's distance sum, pooled with ``prior_items`` pseudo-items at the mean distance."""
        if prior_items > 0:
            items_measured = with_company.sum() if exclude_self else float(n_items_judged.sum())
            pooled = float(distance_total.sum()) / items_measured if items_measured > 0 else 0.0
            distance_total = distance_total + prior_items * pooled
        return np.asarray(prior / np.maximum(distance_total, min_total_distance), dtype=np.float64)

    def reliability_from(c_mu: FloatArray, c_nu: FloatArray, total: FloatArray, used: FloatArray) -> FloatArray:
        np.subtract(mu_t, c_mu, out=d_mu)
        np.subtract(nu_t, c_nu, out=d_nu)
        if distance == "szmidt_kacprzyk":
            np.add(d_mu, d_nu, out=squared)
            np.multiply(squared, d_mu, out=squared)  # Δμ(Δμ + Δν) + (Δν)² = ½[(Δμ)² + (Δν)² + (Δπ)²]
        else:
            np.multiply(d_mu, d_mu, out=squared)
        np.multiply(d_nu, d_nu, out=d_nu)
        np.add(squared, d_nu, out=squared)
        if not exclude_self:
            return shrunk(np.asarray(np.einsum("kc,kc->k", squared, weight_t), dtype=np.float64))
        # The others' consensus differs from everyone's by a factor: own − c₋ₖ = T/(T − βₖ)·(own − c), T being
        # the cell's total reliability, so the distance to the others needs no second consensus.
        cell_total = np.where(total > 0.0, total, 1.0)
        factor = d_mu
        np.multiply(counted_t, used[:, None], out=factor)
        np.subtract(cell_total, factor, out=factor)
        # T − βₖ is a sum of the others' positive reliabilities; the floor only guards against rounding.
        np.maximum(factor, 1e-12 * cell_total, out=factor)
        np.divide(cell_total, factor, out=factor)
        np.multiply(factor, factor, out=factor)
        np.multiply(factor, counted_t, out=factor)
        # Σ_c squared · factor, each annotator's row summed along the cells.
        return shrunk(np.asarray(np.einsum("kc,kc->k", squared, factor), dtype=np.float64))

    reliability = np.ones(n_annotators)
    c_mu, c_nu, total = consensus_of(reliability)
    history: list[float] = []
    converged = False
    iterations = 0
    while iterations < max_iter and not converged:
        iterations += 1
        updated_reliability = reliability_from(c_mu, c_nu, total, reliability)
        new_mu, new_nu, new_total = consensus_of(updated_reliability)
        change = np.sum((new_mu - c_mu) ** 2 + (new_nu - c_nu) ** 2)
        size = np.sum(new_mu * new_mu + new_nu * new_nu)
        loss = float(change / size) if size > 0 else 0.0
        history.append(loss)
        converged = loss < tol
        reliability, c_mu, c_nu, total = updated_reliability, new_mu, new_nu, new_total
    # As crowd-kit does, report the reliabilities implied by the final consensus.
    reliability = reliability_from(c_mu, c_nu, total, reliability)
    nobody = total <= 0.0
    consensus = IFS(
        np.where(nobody, np.nan, c_mu).reshape(mu_a.shape[:-1]),
        np.where(nobody, np.nan, c_nu).reshape(mu_a.shape[:-1]),
    )
    total_reliability = reliability.sum()
    weight = reliability / total_reliability if total_reliability > 0 else np.full(n_annotators, 1.0 / n_annotators)
    return ConsensusWeights(
        weight=np.asarray(weight, dtype=np.float64),
        reliability=np.asarray(reliability, dtype=np.float64),
        consensus=consensus,
        iterations=iterations,
        converged=converged,
        loss_history=tuple(history),
    )
