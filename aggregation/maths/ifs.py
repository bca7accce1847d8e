"""Intuitionistic fuzzy set (IFS) maths for preference annotation: pure numpy, vectorised over whole projects.

An IFS value is a pair (μ, ν) with μ, ν ≥ 0 and μ + ν ≤ 1; its hesitation is π = 1 − μ − ν.

Array conventions (every function in this package follows them):

* ``mu`` and ``nu`` are float arrays of the same shape with **annotators on the last axis**, items on axis 0 and
  responses on axis 1, e.g. ``(items, responses, criteria, annotators)`` or ``(items, responses, annotators)``.
  Aggregated results drop the annotator axis: ``(items, responses, criteria)`` or ``(items, responses)``.
* Missing judgments are marked by a boolean ``mask`` of the same shape (True = present). Values under a False mask
  are never read (they may be NaN or garbage); callers must not zero-fill them, because a zero is a judgment.
* Annotator weights ``w`` broadcast against the values: shape ``(annotators,)`` or ``(..., annotators)``. Every
  operator renormalises the weights over the annotators *present in each cell*, so a missing judgment neither
  counts as zero nor shifts weight to nobody. A cell with no present annotator of positive weight gives NaN.
* Values are floats in [0, 1]. Storage elsewhere is integer per-mille: divide by 1000 before calling.

Operators (see :func:`aggregate`):

* ``weighted_mean``: the paper's Algorithm 1, μ = Σ wᵢμᵢ, ν = Σ wᵢνᵢ.
* ``ifwa``: Xu (2007) intuitionistic fuzzy weighted averaging, μ = 1 − Π(1−μᵢ)^wᵢ, ν = Π νᵢ^wᵢ. The paper's
  Eq. (7) swaps the parts and is not an aggregation operator (one annotator (μ, ν) would come out as (1−μ, ν)); it
  is deliberately not implemented.
* ``ifwg``: Xu & Yager (2006) intuitionistic fuzzy weighted geometric, μ = Π μᵢ^wᵢ, ν = 1 − Π(1−νᵢ)^wᵢ.

All three are idempotent, bounded, monotone and return valid IFS values, and componentwise
μ_IFWA ≥ μ_mean ≥ μ_IFWG (ν in the opposite order): the weighted AM-GM inequality.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

# Values, operators and input checks live in aggregation.maths.ifs_operators; every public name is importable from here.
from aggregation.maths.ifs_operators import _AXIS_LETTERS, _as_float, _dot_last, _prepare, _sum_last
from aggregation.maths.ifs_operators import IFS as IFS
from aggregation.maths.ifs_operators import IFWA_EPS as IFWA_EPS
from aggregation.maths.ifs_operators import OPERATORS as OPERATORS
from aggregation.maths.ifs_operators import TIE as TIE
from aggregation.maths.ifs_operators import TOLERANCE_SLACK as TOLERANCE_SLACK
from aggregation.maths.ifs_operators import UNDEFINED as UNDEFINED
from aggregation.maths.ifs_operators import VALIDITY_TOLERANCE as VALIDITY_TOLERANCE
from aggregation.maths.ifs_operators import BoolArray as BoolArray
from aggregation.maths.ifs_operators import FloatArray as FloatArray
from aggregation.maths.ifs_operators import IntArray as IntArray
from aggregation.maths.ifs_operators import Operator as Operator
from aggregation.maths.ifs_operators import accuracy as accuracy
from aggregation.maths.ifs_operators import aggregate as aggregate
from aggregation.maths.ifs_operators import aggregate_all as aggregate_all
from aggregation.maths.ifs_operators import combine_criteria as combine_criteria
from aggregation.maths.ifs_operators import combine_criterion_values as combine_criterion_values
from aggregation.maths.ifs_operators import hesitation as hesitation
from aggregation.maths.ifs_operators import ifwa as ifwa
from aggregation.maths.ifs_operators import ifwg as ifwg
from aggregation.maths.ifs_operators import score as score
from aggregation.maths.ifs_operators import validate_ifs as validate_ifs
from aggregation.maths.ifs_operators import weighted_mean as weighted_mean

# --------------------------------------------------------------------------------------------------------------
# Measures of single values and sets


def _squared_distance(d_mu: FloatArray, d_nu: FloatArray) -> FloatArray:
    """½[(Δμ)² + (Δν)² + (Δπ)²] with Δπ = −(Δμ + Δν), which simplifies to (Δμ)² + (Δν)² + ΔμΔν."""
    return np.asarray(d_mu * (d_mu + d_nu) + d_nu * d_nu, dtype=np.float64)


def _reduce_mean(
    x: FloatArray, axis: int | tuple[int, ...] | None, mask: ArrayLike | None, keep_elementwise: bool
) -> FloatArray:
    if axis is None and keep_elementwise:
        if mask is not None:
            return np.where(np.asarray(mask, dtype=bool), x, np.nan)
        return x
    if mask is None:
        return np.asarray(np.mean(x, axis=axis), dtype=np.float64)
    present = np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)
    total = _sum_axes(np.where(present, x, 0.0), axis)
    count = _sum_axes(present.astype(np.float64), axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / count, dtype=np.float64)


def _sum_axes(x: FloatArray, axis: int | tuple[int, ...] | None) -> FloatArray:
    # einsum reduces short trailing axes several times faster than np.sum does.
    letters = _AXIS_LETTERS[: x.ndim]
    if axis is None:
        return np.asarray(np.einsum(f"{letters}->", x), dtype=np.float64)
    reduced = {a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    kept = "".join(letter for i, letter in enumerate(letters) if i not in reduced)
    return np.asarray(np.einsum(f"{letters}->{kept}", x), dtype=np.float64)


def distance(
    mu_a: ArrayLike,
    nu_a: ArrayLike,
    mu_b: ArrayLike,
    nu_b: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    *,
    mask: ArrayLike | None = None,
    how: Literal["mean", "rms"] = "mean",
) -> FloatArray:
    """Szmidt-Kacprzyk normalised Euclidean distance with hesitation, in [0, 1].

    Per value d = √(½[(Δμ)² + (Δν)² + (Δπ)²]); (1, 0) and (0, 1) are at distance 1. With ``axis=None`` the result
    is per value; otherwise the distance between the sets along ``axis`` is the mean of the per-value distances
    (``how="mean"``, the project's definition), or Szmidt-Kacprzyk's original root of the mean of squares
    (``how="rms"``). ``mask`` restricts the set average to the values present in both sets.
    """
    d_mu = _as_float(mu_a) - _as_float(mu_b)
    d_nu = _as_float(nu_a) - _as_float(nu_b)
    squared = _squared_distance(d_mu, d_nu)
    if how == "mean":
        return _reduce_mean(np.sqrt(squared), axis, mask, keep_elementwise=True)
    if how == "rms":
        return np.sqrt(_reduce_mean(squared, axis, mask, keep_elementwise=True))
    raise ValueError(f"unknown how={how!r}")


def entropy(
    mu: ArrayLike, nu: ArrayLike, axis: int | tuple[int, ...] | None = None, *, mask: ArrayLike | None = None
) -> FloatArray:
    """Szmidt-Kacprzyk (2001) entropy E = (min(μ,ν) + π) / (max(μ,ν) + π) ∈ [0, 1].

    0 for crisp values ((1, 0) or (0, 1)), 1 when μ = ν (including full hesitation (0, 0)). Per value with
    ``axis=None``, otherwise averaged along ``axis`` (over present values when ``mask`` is given).
    """
    mu_a = _as_float(mu)
    nu_a = _as_float(nu)
    pi = 1.0 - mu_a - nu_a
    # max(μ, ν) + π ≥ ½(μ + ν) + π > 0 for every valid value, so the ratio is always defined.
    values = (np.minimum(mu_a, nu_a) + pi) / (np.maximum(mu_a, nu_a) + pi)
    return _reduce_mean(values, axis, mask, keep_elementwise=True)


def confidence(
    mu: ArrayLike, nu: ArrayLike, axis: int | tuple[int, ...] | None = None, *, mask: ArrayLike | None = None
) -> FloatArray:
    """Confidence = 1 − mean π, over all values (``axis=None``) or along ``axis``; present values only with a mask."""
    return 1.0 - _reduce_mean(hesitation(mu, nu), axis, mask, keep_elementwise=False)


def clarity(
    mu: ArrayLike, nu: ArrayLike, axis: int | tuple[int, ...] | None = None, *, mask: ArrayLike | None = None
) -> FloatArray:
    """Clarity = mean |μ − ν|, over all values (``axis=None``) or along ``axis``; present values only with a mask."""
    return _reduce_mean(np.abs(score(mu, nu)), axis, mask, keep_elementwise=False)


# --------------------------------------------------------------------------------------------------------------
# Agreement among annotators


def _any_value(present: BoolArray) -> BoolArray:
    """(items, values, annotators) → (items, annotators): whether each annotator gave any of the item's values.

    A few in-place ORs of (items, annotators) slices: much faster than ``any(axis=1)`` across a middle axis.
    """
    n_values = present.shape[1]
    if n_values == 0 or n_values > 64:
        return np.asarray(present.any(axis=1), dtype=bool)
    on_item = present[:, 0].copy()
    for value in range(1, n_values):
        np.logical_or(on_item, present[:, value], out=on_item)
    return on_item


def _compact_annotators(
    mu: FloatArray, nu: FloatArray, present: BoolArray, on_item: BoolArray
) -> tuple[FloatArray, FloatArray, BoolArray, BoolArray]:
    """Move each item's present annotators to the front and drop trailing all-absent slots.

    Pairwise work is then O(items × k_max²) where k_max is the most annotators on any item, not the number of
    annotators in the project (sparse projects have hundreds of annotators but a handful per item). ``on_item`` is
    :func:`_any_value` of ``present``; it is returned reordered along with the rest.
    """
    k_max = int(on_item.sum(axis=1).max(initial=0))
    if k_max == present.shape[-1]:
        return mu, nu, present, on_item
    order = np.argsort(~on_item, axis=1, kind="stable")[:, :k_max]
    order3 = order[:, None, :]
    return (
        np.take_along_axis(mu, order3, axis=-1),
        np.take_along_axis(nu, order3, axis=-1),
        np.take_along_axis(present, order3, axis=-1),
        np.take_along_axis(on_item, order, axis=-1),
    )


def ifs_agreement(mu: ArrayLike, nu: ArrayLike, mask: ArrayLike | None = None, *, validate: bool = True) -> FloatArray:
    """IFS agreement per item: 1 − mean over annotator pairs of d(Aᵢ, Aⱼ), i.e. 1 − (2/(k(k−1))) Σ_{i<j} d(Aᵢ, Aⱼ).

    Axis 0 is items and the last axis annotators; every axis in between (responses, criteria) forms the set Aᵢ of
    an annotator's values for the item, and d is the Szmidt-Kacprzyk distance averaged over the values both
    annotators gave. The result is 1 when all annotators agree exactly and 0 when every pair is at maximum distance.

    The paper's Eq. (11) divides by k(k−1) instead of k(k−1)/2, which halves the mean distance and puts the floor
    at 0.5; this is the corrected form. Items with fewer than two annotators sharing a value give NaN.
    """
    mu_a, nu_a, present = _prepare(mu, nu, mask, validate)
    if mu_a.ndim < 2:
        raise ValueError("expected shape (items, ..., annotators)")
    n_items, n_annotators = mu_a.shape[0], mu_a.shape[-1]
    mu3 = mu_a.reshape(n_items, -1, n_annotators)
    nu3 = nu_a.reshape(n_items, -1, n_annotators)
    if present is None:
        present3 = np.ones(mu3.shape, dtype=bool)
        on_item = _any_value(present3)
    else:
        present3 = present.reshape(mu3.shape)
        mu3 = np.where(present3, mu3, 0.0)
        nu3 = np.where(present3, nu3, 0.0)
        mu3, nu3, present3, on_item = _compact_annotators(mu3, nu3, present3, _any_value(present3))
    # Annotator-first and contiguous, so that each pair below reads two contiguous (items, values) blocks.
    mu_t = np.ascontiguousarray(np.moveaxis(mu3, -1, 0))
    nu_t = np.ascontiguousarray(np.moveaxis(nu3, -1, 0))
    # Usually an annotator gives all of an item's values or none: then pairs are weighted per item, not per value.
    whole_items = bool((present3 == on_item[:, None, :]).all())
    on_item_t = np.ascontiguousarray(on_item.T).astype(np.float64)
    present_t = None if whole_items else np.ascontiguousarray(np.moveaxis(present3, -1, 0)).astype(np.float64)
    n_values = mu3.shape[1]
    distance_total = np.zeros(n_items)
    pairs = np.zeros(n_items)
    d_mu, d_nu, per_value = (np.empty(mu_t.shape[1:]) for _ in range(3))
    value_sum = np.empty(n_items)

    def sum_values(x: FloatArray) -> FloatArray:
        # Two values (side by side, one criterion): one add, the same sum einsum forms, without its per-row cost.
        if n_values == 2:
            return np.add(x[:, 0], x[:, 1], out=value_sum)
        return _sum_last(x)

    # A Python loop over k(k−1)/2 annotator pairs (k per item after compaction, a handful), each vectorised over
    # every item of the project, in place: the blocks are as large as the project.
    for first, second in itertools.combinations(range(mu_t.shape[0]), 2):
        np.subtract(mu_t[first], mu_t[second], out=d_mu)
        np.subtract(nu_t[first], nu_t[second], out=d_nu)
        np.add(d_mu, d_nu, out=per_value)
        np.multiply(per_value, d_mu, out=per_value)
        np.multiply(d_nu, d_nu, out=d_nu)
        np.add(per_value, d_nu, out=per_value)
        np.sqrt(per_value, out=per_value)  # √(Δμ(Δμ + Δν) + (Δν)²), the per-value distance
        if present_t is None:
            both_on_item = on_item_t[first] * on_item_t[second]
            distance_total += sum_values(per_value) * (both_on_item / n_values)
            pairs += both_on_item
            continue
        both = present_t[first] * present_t[second]
        shared = _sum_last(both)
        with np.errstate(invalid="ignore", divide="ignore"):
            pair_distance = _dot_last(per_value, both) / shared
        has_pair = shared > 0
        distance_total += np.where(has_pair, pair_distance, 0.0)
        pairs += has_pair
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_distance = distance_total / pairs
    return np.asarray(1.0 - mean_distance, dtype=np.float64)


# --------------------------------------------------------------------------------------------------------------
# Preferences between responses


def pairwise_preference(mu_a: ArrayLike, nu_a: ArrayLike, mu_b: ArrayLike, nu_b: ArrayLike) -> IFS:
    """Intuitionistic preference of A over B: r_AB = ((μ_A + ν_B)/2, (ν_A + μ_B)/2).

    A valid IFS value whenever A and B are; r_BA swaps the two parts and π_AB = (π_A + π_B)/2.
    """
    support_a, opposition_a, support_b, opposition_b = (_as_float(x) for x in (mu_a, nu_a, mu_b, nu_b))
    return IFS(0.5 * (support_a + opposition_b), 0.5 * (opposition_a + support_b))


def margin(mu_a: ArrayLike, nu_a: ArrayLike, mu_b: ArrayLike, nu_b: ArrayLike) -> FloatArray:
    """Margin S_A − S_B ∈ [−2, 2]."""
    return score(mu_a, nu_a) - score(mu_b, nu_b)


def soft_label(mu_a: ArrayLike, nu_a: ArrayLike, mu_b: ArrayLike, nu_b: ArrayLike) -> FloatArray:
    """Soft label p(A ≻ B) = 0.5 + (S_A − S_B)/4 ∈ [0, 1]; equals 0.5 + S(r_AB)/2 and p(B ≻ A) = 1 − p(A ≻ B)."""
    return 0.5 + 0.25 * margin(mu_a, nu_a, mu_b, nu_b)


@dataclass(frozen=True)
class PairTable:
    """All unordered response pairs (a < b) of items with n ≥ 2 responses.

    ``first`` and ``second`` hold the response indices of each pair; in the other arrays the response axis is
    replaced by a pair axis of the same position.
    """

    first: IntArray
    second: IntArray
    preference: IFS
    soft_label: FloatArray
    margin: FloatArray


def all_pairs(mu: ArrayLike, nu: ArrayLike, response_axis: int = 1) -> PairTable:
    """Pairwise preference, soft label and margin for every pair a < b of responses along ``response_axis``."""
    mu_a = _as_float(mu)
    nu_a = _as_float(nu)
    n_responses = mu_a.shape[response_axis]
    if n_responses < 2:
        raise ValueError("need at least two responses")
    first, second = np.triu_indices(n_responses, k=1)
    mu_first = np.take(mu_a, first, axis=response_axis)
    nu_first = np.take(nu_a, first, axis=response_axis)
    mu_second = np.take(mu_a, second, axis=response_axis)
    nu_second = np.take(nu_a, second, axis=response_axis)
    return PairTable(
        first=first.astype(np.int64),
        second=second.astype(np.int64),
        preference=pairwise_preference(mu_first, nu_first, mu_second, nu_second),
        soft_label=soft_label(mu_first, nu_first, mu_second, nu_second),
        margin=margin(mu_first, nu_first, mu_second, nu_second),
    )


def preferred_response(scores: ArrayLike, tolerance: float = 0.1, axis: int = 1) -> IntArray:
    """Index of the best-scoring response along ``axis``; ``TIE`` (−1) when the top two differ by less than
    ``tolerance`` (an exact tie always counts), ``UNDEFINED`` (−2) where any score is NaN (a missing judgment).

    ``scores`` are usually criterion-weighted S = μ − ν; gaps within 1e-9 of the tolerance count as reaching it,
    and gaps within 1e-9 of zero as exact ties.
    """
    s = _as_float(scores)
    if s.shape[axis] < 2:
        raise ValueError("need at least two responses")
    if s.shape[axis] == 2:
        # The side-by-side case, without a partial sort: NaN makes the gap NaN and fails both comparisons.
        index: list[int | slice] = [slice(None)] * s.ndim
        index[axis] = 0
        first = s[tuple(index)]
        index[axis] = 1
        second = s[tuple(index)]
        difference = first - second
        gap = np.abs(difference)
        best = (difference < 0.0).astype(np.int64)
        undefined = np.asarray(np.isnan(difference), dtype=bool)
    else:
        s = np.moveaxis(s, axis, -1)
        undefined = np.asarray(np.isnan(s).any(axis=-1), dtype=bool)
        filled = np.where(np.isnan(s), -np.inf, s)
        best = np.argmax(filled, axis=-1)
        top_two = -np.partition(-filled, 1, axis=-1)[..., :2]
        with np.errstate(invalid="ignore"):
            gap = top_two[..., 0] - top_two[..., 1]
    # A gap within rounding of zero is an exact tie: per-mille values tie exactly (71 − 0 = 79 − 8) but their
    # differences in floating point need not (0.071 vs 0.07100000000000001).
    tie = (gap <= TOLERANCE_SLACK) | (gap < tolerance - TOLERANCE_SLACK)
    # ``best`` is a fresh array here: mark ties and undefined items in place, without boolean-index assignment.
    result = np.array(best, dtype=np.int64, copy=None)
    np.copyto(result, TIE, where=tie)
    np.copyto(result, UNDEFINED, where=undefined)
    return result


def rank_responses(mu: ArrayLike, nu: ArrayLike, axis: int = 1) -> IntArray:
    """Response indices along ``axis`` from best to worst: by score S, then by accuracy H (stable otherwise)."""
    s = np.moveaxis(score(mu, nu), axis, -1)
    h = np.moveaxis(accuracy(mu, nu), axis, -1)
    order = np.lexsort((-h, -s), axis=-1)
    return np.moveaxis(order, -1, axis).astype(np.int64)
