"""IFS values and the three aggregation operators (weighted mean, IFWA, IFWG), with their input checks and the
criteria combination. Pure numpy; :mod:`aggregation.maths.ifs` (whose docstring states the array conventions and the
operators' definitions) re-exports every public name."""

from __future__ import annotations

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


def score(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Score S = μ − ν ∈ [−1, 1]; responses rank by S, then by accuracy."""
    return _as_float(mu) - _as_float(nu)


def accuracy(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Accuracy H = μ + ν ∈ [0, 1] (how much of the judgment is committed)."""
    return _as_float(mu) + _as_float(nu)


def hesitation(mu: ArrayLike, nu: ArrayLike) -> FloatArray:
    """Hesitation π = 1 − μ − ν ∈ [0, 1]."""
    return 1.0 - _as_float(mu) - _as_float(nu)


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
