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
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]

Operator = Literal["weighted_mean", "ifwa", "ifwg"]
OPERATORS: tuple[Operator, ...] = ("weighted_mean", "ifwa", "ifwg")

#: Default clipping for IFWA inputs. A stored 0 per-mille means "below one storage step", so IFWA reads it as one
#: step: this keeps log() finite and softens (does not remove) the operator's annihilator.
IFWA_EPS = 1e-3

#: Tolerance for μ + ν ≤ 1 on inputs, so that values computed in floating point are not rejected for rounding.
VALIDITY_TOLERANCE = 1e-9

#: ``preferred_response`` results besides a response index.
TIE = -1
UNDEFINED = -2

#: Score gaps within this of a tie tolerance count as reaching it: per-mille inputs make exact boundaries common
#: (0.3 − 0.2 is 0.09999999999999998 in binary floating point).
TOLERANCE_SLACK = 1e-9

_AXIS_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class IFS(NamedTuple):
    """A pair of arrays (μ, ν); unpacks like a tuple: ``mu, nu = ifwa(...)``."""

    mu: FloatArray
    nu: FloatArray

    @property
    def hesitation(self) -> FloatArray:
        """π = 1 − μ − ν."""
        return hesitation(self.mu, self.nu)

    @property
    def score(self) -> FloatArray:
        """S = μ − ν."""
        return score(self.mu, self.nu)


# --------------------------------------------------------------------------------------------------------------
# Input handling


def _as_float(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def _prepare(
    mu: ArrayLike, nu: ArrayLike, mask: ArrayLike | None, validate: bool = True
) -> tuple[FloatArray, FloatArray, BoolArray | None]:
    mu_a = _as_float(mu)
    nu_a = _as_float(nu)
    if mu_a.shape != nu_a.shape:
        raise ValueError(f"mu and nu differ in shape: {mu_a.shape} vs {nu_a.shape}")
    if mu_a.ndim == 0:
        raise ValueError("expected annotators on the last axis; got a scalar")
    present = _prepare_mask(mask, mu_a.shape)
    if validate:
        _check_valid(mu_a, nu_a, present)
    return mu_a, nu_a, present


def _prepare_mask(mask: ArrayLike | None, shape: tuple[int, ...]) -> BoolArray | None:
    if mask is None:
        return None
    present = np.asarray(mask, dtype=bool)
    if present.shape != shape:
        raise ValueError(f"mask shape {present.shape} does not match values {shape}")
    return present


def _check_valid(mu: FloatArray, nu: FloatArray, present: BoolArray | None) -> None:
    # Fast path: when every entry is valid, masked or not, three reductions decide it without boolean temporaries.
    # NaN or infinity anywhere fails a comparison here and falls through to the exact check below.
    if mu.size and mu.min() >= 0.0 and nu.min() >= 0.0 and np.add(mu, nu).max() <= 1.0 + VALIDITY_TOLERANCE:
        return
    # Written so that NaN fails every comparison and is reported as invalid where present.
    valid = (mu >= 0.0) & (nu >= 0.0) & (mu + nu <= 1.0 + VALIDITY_TOLERANCE)
    invalid = ~valid if present is None else present & ~valid
    if invalid.any():
        where = tuple(int(i) for i in np.argwhere(invalid)[0])
        raise ValueError(
            f"invalid IFS value at {where}: mu={mu[where]!r}, nu={nu[where]!r} (need mu, nu >= 0 and mu + nu <= 1)"
        )


def validate_ifs(mu: ArrayLike, nu: ArrayLike, mask: ArrayLike | None = None) -> None:
    """Raise ``ValueError`` naming the first present value that is not a valid IFS value (NaN included).

    Every operator runs this check unless called with ``validate=False``.
    """
    mu_a, nu_a = _as_float(mu), _as_float(nu)
    if mu_a.shape != nu_a.shape:
        raise ValueError(f"mu and nu differ in shape: {mu_a.shape} vs {nu_a.shape}")
    _check_valid(mu_a, nu_a, _prepare_mask(mask, mu_a.shape))


def _entry_weights(
    shape: tuple[int, ...], w: ArrayLike | None, present: BoolArray | None, normalize: bool
) -> tuple[FloatArray, BoolArray]:
    """Weights per entry, zero where absent, rows normalised to sum 1 over present annotators when asked; and the
    cells with no present annotator of positive weight (their rows are all zero; callers report NaN there).
    """
    if w is None:
        weights = np.ones(shape) if present is None else present.astype(np.float64)
    else:
        w_a = _as_float(w)
        if np.any(~(w_a >= 0.0)):
            raise ValueError("annotator weights must be finite and non-negative")
        weights = np.broadcast_to(w_a, shape).astype(np.float64, copy=True)
        if present is not None:
            weights *= present
    total = _sum_last(weights)
    empty = np.asarray(total <= 0.0, dtype=bool)
    if normalize:
        weights /= np.where(empty, np.inf, total)[..., None]
    return weights, empty


def _sum_last(x: FloatArray) -> FloatArray:
    # einsum is several times faster than .sum(-1) over a short trailing axis.
    return np.asarray(np.einsum("...k->...", x), dtype=np.float64)


def _dot_last(x: FloatArray, weights: FloatArray) -> FloatArray:
    return np.asarray(np.einsum("...k,...k->...", x, weights), dtype=np.float64)


def _with_empty_cells(out_mu: FloatArray, out_nu: FloatArray, empty: BoolArray) -> IFS:
    if empty.ndim and not empty.any():
        # Every cell has someone: the kernels' results are fresh float arrays already and stand as they are.
        return IFS(np.asarray(out_mu, dtype=np.float64), np.asarray(out_nu, dtype=np.float64))
    # np.where also turns the 0-d results of a single cell into arrays, so callers always get arrays.
    return IFS(
        np.asarray(np.where(empty, np.nan, out_mu), dtype=np.float64),
        np.asarray(np.where(empty, np.nan, out_nu), dtype=np.float64),
    )


# --------------------------------------------------------------------------------------------------------------
# Operators


@dataclass(frozen=True)
class _Operands:
    """Inputs prepared once for any number of operators."""

    mu: FloatArray  # absent entries set to 0: finite, and weightless below
    nu: FloatArray
    weights: FloatArray  # per entry, 0 where absent, rows summing to 1 (or raw, for the unnormalised mean)
    empty: BoolArray  # cells with no present annotator of positive weight
    active: BoolArray | None  # weights > 0, or None when every entry is active


def _operands(
    mu: ArrayLike,
    nu: ArrayLike,
    w: ArrayLike | None,
    mask: ArrayLike | None,
    validate: bool,
    normalize: bool = True,
) -> _Operands:
    mu_a, nu_a, present = _prepare(mu, nu, mask, validate)
    weights, empty = _entry_weights(mu_a.shape, w, present, normalize)
    if present is not None:
        mu_a = np.where(present, mu_a, 0.0)
        nu_a = np.where(present, nu_a, 0.0)
    every_entry_active = present is None and (w is None or bool(np.all(_as_float(w) > 0.0)))
    return _Operands(mu_a, nu_a, weights, empty, None if every_entry_active else weights > 0.0)


def _mean_of(operands: _Operands, normalize: bool = True) -> IFS:
    out_mu = _dot_last(operands.mu, operands.weights)
    out_nu = _dot_last(operands.nu, operands.weights)
    if not normalize:
        total = out_mu + out_nu
        scale = np.where(total > 1.0, total, 1.0)
        out_mu = out_mu / scale
        out_nu = out_nu / scale
    return _with_empty_cells(out_mu, out_nu, operands.empty)


def _ifwa_of(operands: _Operands, eps: float) -> IFS:
    # Absent entries hold 0, which the clip makes finite under log(); their zero weight then removes them.
    not_mu = 1.0 - np.clip(operands.mu, eps, 1.0 - eps)
    # ν ≤ 1 − μ termwise makes Πνᵢ^wᵢ ≤ Π(1−μᵢ)^wᵢ, i.e. a valid output; trimming restores it for inputs that
    # exceed μ + ν = 1 by rounding, which the power would otherwise amplify.
    log_nu = np.log(np.minimum(np.clip(operands.nu, eps, 1.0 - eps), not_mu))
    out_mu = 1.0 - np.exp(_dot_last(np.log(not_mu), operands.weights))
    out_nu = np.exp(_dot_last(log_nu, operands.weights))
    return _with_empty_cells(out_mu, out_nu, operands.empty)


def _ifwg_of(operands: _Operands) -> IFS:
    # Absent entries give 1 − 0 (log 0 below); the floor keeps a ν that passed validation at 1 + 1e-10 out of log().
    not_nu = np.maximum(1.0 - operands.nu, 0.0)
    mu_a = operands.mu if operands.active is None else np.where(operands.active, operands.mu, 1.0)
    with np.errstate(divide="ignore"):
        # Entries of zero weight must contribute log 1 = 0, never 0 · (−inf); μ ≤ 1 − ν termwise keeps the output
        # valid for inputs off by rounding (see IFWA).
        log_mu = np.log(np.minimum(mu_a, not_nu))
        log_not_nu = np.log(not_nu)
    out_mu = np.exp(_dot_last(log_mu, operands.weights))
    out_nu = 1.0 - np.exp(_dot_last(log_not_nu, operands.weights))
    return _with_empty_cells(out_mu, out_nu, operands.empty)


def weighted_mean(
    mu: ArrayLike,
    nu: ArrayLike,
    w: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    normalize: bool = True,
    validate: bool = True,
) -> IFS:
    """The paper's Algorithm 1: μ = Σ wᵢμᵢ, ν = Σ wᵢνᵢ over the last (annotator) axis.

    With ``normalize=True`` (default) the weights are rescaled to sum 1 over the annotators present in each cell,
    which keeps μ + ν ≤ 1 by construction. With ``normalize=False`` the raw weights are used as the paper writes
    them, and its guard applies: where μ + ν > 1 both are divided by μ + ν. (With raw weights summing below 1 the
    result shrinks towards (0, 0); that is the paper's behaviour, kept on purpose for comparison.)
    """
    return _mean_of(_operands(mu, nu, w, mask, validate, normalize), normalize)


def ifwa(
    mu: ArrayLike,
    nu: ArrayLike,
    w: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    eps: float = IFWA_EPS,
    validate: bool = True,
) -> IFS:
    """Xu (2007) IFWA: μ = 1 − Π(1−μᵢ)^wᵢ, ν = Π νᵢ^wᵢ, weights normalised over present annotators.

    Annihilator: a single νᵢ = 0 forces ν = 0 and a single μᵢ = 1 forces μ = 1, whatever everyone else said.
    Inputs are therefore clipped to [eps, 1 − eps] for this operator only (default one per-mille step). Clipping
    keeps the result a valid IFS and the operator monotone, but an extreme judgment still pulls hard: four
    annotators at ν = 0.4 and one at ν = 0 give ν ≈ 0.12 (the weighted mean gives 0.32). Computed as a weighted
    log-sum, so the cost is one log per value and one exp per cell.
    """
    if not 0.0 < eps < 0.5:
        raise ValueError("eps must lie in (0, 0.5)")
    return _ifwa_of(_operands(mu, nu, w, mask, validate), eps)


def ifwg(
    mu: ArrayLike,
    nu: ArrayLike,
    w: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    validate: bool = True,
) -> IFS:
    """Xu & Yager (2006) IFWG: μ = Π μᵢ^wᵢ, ν = 1 − Π(1−νᵢ)^wᵢ, weights normalised over present annotators.

    The dual of IFWA, with the dual annihilator: one μᵢ = 0 forces μ = 0 and one νᵢ = 1 forces ν = 1. Inputs are
    not clipped (the log-sum handles zeros exactly: log 0 = −inf gives a product of 0).
    """
    return _ifwg_of(_operands(mu, nu, w, mask, validate))


def aggregate(
    mu: ArrayLike,
    nu: ArrayLike,
    operator: Operator = "weighted_mean",
    w: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    validate: bool = True,
) -> IFS:
    """Aggregate over the last (annotator) axis with ``operator`` in ``OPERATORS``.

    Every operator checks that present inputs are valid IFS values and raises ``ValueError`` naming the first bad
    one; ``validate=False`` skips the check for inputs already guaranteed valid (e.g. by database constraints).
    """
    if operator == "weighted_mean":
        return weighted_mean(mu, nu, w, mask, validate=validate)
    if operator == "ifwa":
        return ifwa(mu, nu, w, mask, validate=validate)
    if operator == "ifwg":
        return ifwg(mu, nu, w, mask, validate=validate)
    raise ValueError(f"unknown operator {operator!r}; expected one of {OPERATORS}")


def aggregate_all(
    mu: ArrayLike,
    nu: ArrayLike,
    w: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    operators: tuple[Operator, ...] = OPERATORS,
    validate: bool = True,
) -> dict[Operator, IFS]:
    """Several operators at once, validating the inputs and normalising the weights only once.

    Same results as calling :func:`aggregate` per operator; what a project recomputation wants.
    """
    unknown = set(operators) - set(OPERATORS)
    if unknown:
        raise ValueError(f"unknown operators {sorted(unknown)}; expected some of {OPERATORS}")
    operands = _operands(mu, nu, w, mask, validate)
    kernels = {"weighted_mean": _mean_of, "ifwa": lambda o: _ifwa_of(o, IFWA_EPS), "ifwg": _ifwg_of}
    return {operator: kernels[operator](operands) for operator in operators}


def combine_criteria(mu: ArrayLike, nu: ArrayLike, criterion_weights: ArrayLike | None = None, axis: int = -1) -> IFS:
    """Paper Eqs. 5-6: μ = Σ_c w_c μ_c and ν = Σ_c w_c ν_c along the criteria ``axis``.

    Weights are rescaled to sum 1 (``None`` means equal weights), so the result is a valid IFS. Use ``axis=-1`` on
    aggregated arrays ``(items, responses, criteria)`` and ``axis=2`` on raw ``(items, responses, criteria,
    annotators)`` arrays. A NaN criterion (nobody judged it) makes the combined value NaN.
    """
    return IFS(
        combine_criterion_values(mu, criterion_weights, axis),
        combine_criterion_values(nu, criterion_weights, axis),
    )


def combine_criterion_values(
    values: ArrayLike, criterion_weights: ArrayLike | None = None, axis: int = -1
) -> FloatArray:
    """Σ_c w_c x_c along ``axis`` with weights rescaled to sum 1: one part of :func:`combine_criteria`.

    Anything linear in (μ, ν) combines the same way, e.g. scores: S(combined) = combined S.
    """
    x = _as_float(values)
    n_criteria = x.shape[axis]
    weights = np.full(n_criteria, 1.0 / n_criteria) if criterion_weights is None else _as_float(criterion_weights)
    if weights.shape != (n_criteria,):
        raise ValueError(f"expected {n_criteria} criterion weights, got shape {weights.shape}")
    if np.any(~(weights >= 0.0)) or weights.sum() <= 0.0:
        raise ValueError("criterion weights must be non-negative with a positive sum")
    weights = weights / weights.sum()
    if n_criteria == 1:
        # np.take already returns a new array: no second copy.
        return np.asarray(np.take(x, 0, axis=axis), dtype=np.float64)
    # A contraction along ``axis`` in place: no copy of the values into a moved layout.
    axis = axis % x.ndim
    letters = _AXIS_LETTERS[: x.ndim]
    contraction = f"{letters},{letters[axis]}->{letters.replace(letters[axis], '')}"
    return np.asarray(np.einsum(contraction, x, weights), dtype=np.float64)


# --------------------------------------------------------------------------------------------------------------
# Measures of single values and sets


def score(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Score S = μ − ν ∈ [−1, 1]; responses rank by S, then by accuracy."""
    return _as_float(mu) - _as_float(nu)


def accuracy(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Accuracy H = μ + ν ∈ [0, 1] (how much of the judgment is committed)."""
    return _as_float(mu) + _as_float(nu)


def hesitation(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Hesitation π = 1 − μ − ν ∈ [0, 1]."""
    return 1.0 - _as_float(mu) - _as_float(nu)


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
