"""Annotator weights: the paper's Eq. (8) and an iterative consensus weighting. Pure numpy, no Django.

Inputs follow :mod:`aggregation.maths.ifs`: ``mu``, ``nu`` of shape (items, responses, annotators) or (items, responses,
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

from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

# The iterative consensus weighting lives in aggregation.maths.consensus; its names stay importable from here.
from aggregation.maths.consensus import DEFAULT_PRIOR_ITEMS as DEFAULT_PRIOR_ITEMS
from aggregation.maths.consensus import ConsensusWeights as ConsensusWeights
from aggregation.maths.consensus import chi2_isf as chi2_isf
from aggregation.maths.consensus import iterative_consensus_weights as iterative_consensus_weights
from aggregation.maths.ifs import (
    UNDEFINED,
    BoolArray,
    FloatArray,
    IntArray,
    combine_criterion_values,
    preferred_response,
    score,
    validate_ifs,
)

_Scalar = TypeVar("_Scalar", bound=np.generic)
ConsistencySource = Literal["repeats", "hesitation_variance", "none"]
DEFAULT_COEFFICIENTS = (1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)


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
