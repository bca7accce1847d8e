"""Iterative consensus weighting of annotators (reliability from distance to the weighted consensus, with a χ²
prior toward equal weight), and the χ² quantile it needs without scipy. Pure numpy; aggregation.maths.weights re-exports
these names beside paper Eq. 8."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, NamedTuple, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.ifs import IFS, FloatArray, _any_value, validate_ifs

_Scalar = TypeVar("_Scalar", bound=np.generic)

#: Strength of the consensus weighting's pull toward equal weight, in pseudo-items (see
#: :func:`iterative_consensus_weights`). Ten because an annotator's mean squared distance over n items has a
#: relative standard error of about √(2/n) (a χ² with n degrees of freedom): 45 % at 10 items, where their own
#: figure starts to mean something, 100 % at 2. Below ten labels the prior dominates, above it their own items do;
#: with hundreds of labels per annotator it changes weights by a few per cent.
DEFAULT_PRIOR_ITEMS = 10


def _cells(x: NDArray[_Scalar]) -> NDArray[_Scalar]:
    """(…, annotators) → (cells, annotators), a view when possible."""
    return x.reshape(-1, x.shape[-1])


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
    _check_options(distance=distance, max_iter=max_iter, prior_items=prior_items)
    mu_a = np.asarray(mu, dtype=np.float64)
    nu_a = np.asarray(nu, dtype=np.float64)
    if mu_a.ndim < 2:
        raise ValueError("expected shape (items, ..., annotators)")
    present = np.ones(mu_a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    validate_ifs(mu_a, nu_a, present)
    blocks = _Blocks.prepare(
        mu_a,
        nu_a,
        present,
        _Rule(alpha, distance, chi2_prior, exclude_self, min_total_distance, prior_items),
    )
    end = blocks.fixed_point(max_iter=max_iter, tol=tol)
    reliability, nobody = end.reliability, end.total <= 0.0
    consensus = IFS(
        np.where(nobody, np.nan, end.c_mu).reshape(mu_a.shape[:-1]),
        np.where(nobody, np.nan, end.c_nu).reshape(mu_a.shape[:-1]),
    )
    n_annotators = mu_a.shape[-1]
    total_reliability = reliability.sum()
    weight = reliability / total_reliability if total_reliability > 0 else np.full(n_annotators, 1.0 / n_annotators)
    return ConsensusWeights(
        weight=np.asarray(weight, dtype=np.float64),
        reliability=np.asarray(reliability, dtype=np.float64),
        consensus=consensus,
        iterations=end.iterations,
        converged=end.converged,
        loss_history=tuple(end.history),
    )


class _FixedPoint(NamedTuple):
    reliability: FloatArray
    c_mu: FloatArray
    c_nu: FloatArray
    total: FloatArray
    iterations: int
    converged: bool
    history: list[float]


def _check_options(*, distance: str, max_iter: int, prior_items: int) -> None:
    if distance not in ("euclidean", "szmidt_kacprzyk"):
        raise ValueError(f"unknown distance {distance!r}")
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    if prior_items < 0:
        raise ValueError("prior_items must be at least 0")


@dataclass(frozen=True)
class _Rule:
    """The options of :func:`iterative_consensus_weights` that shape each update."""

    alpha: float
    distance: str
    chi2_prior: bool
    exclude_self: bool
    min_total_distance: float
    prior_items: int


@dataclass
class _Blocks:
    """The judgments annotator-first, on (annotators, cells) blocks with zeros where absent, and what every update
    needs of them.

    Per-cell figures then broadcast along long contiguous rows instead of across a short trailing axis, each weighted
    sum over annotators is one matrix-vector product (reliability @ block), and each sum over cells runs along a
    contiguous row. Only the three input blocks are transposed, once.
    """

    rule: _Rule
    mu_t: FloatArray
    nu_t: FloatArray
    weight_t: FloatArray
    counted_t: FloatArray
    prior: FloatArray
    with_company: FloatArray
    n_items_judged: NDArray[np.int64]
    # Scratch blocks reused by every iteration: the loop is memory-bound, and fresh 8-byte × cells × annotators
    # temporaries cost as much as the arithmetic.
    d_mu: FloatArray
    d_nu: FloatArray
    squared: FloatArray

    @classmethod
    def prepare(cls, mu_a: FloatArray, nu_a: FloatArray, present: NDArray[np.bool_], rule: _Rule) -> _Blocks:
        n_annotators = mu_a.shape[-1]
        # Whole-number counts: exact whichever way they are formed.
        on_item = _any_value(present.reshape(mu_a.shape[0], -1, n_annotators))
        n_items_judged = np.count_nonzero(on_item, axis=0).astype(np.int64)
        if rule.chi2_prior:
            quantiles = {
                int(k): chi2_isf(rule.alpha / 2.0, int(k) + rule.prior_items)
                for k in np.unique(n_items_judged)
                if k > 0
            }
            prior = np.array([quantiles.get(int(k), 0.0) for k in n_items_judged])
        else:
            prior = (n_items_judged > 0).astype(np.float64)
        # Items on which an annotator has company: the ones whose distance to a consensus of others is measured.
        on_item_count = np.count_nonzero(on_item, axis=1)
        with_company = np.count_nonzero(on_item & (on_item_count > 1)[:, None], axis=0).astype(np.float64)
        present_t = np.ascontiguousarray(_cells(present).T)
        weight_t = present_t.astype(np.float64)
        mu_t = np.ascontiguousarray(_cells(mu_a).T)
        nu_t = np.ascontiguousarray(_cells(nu_a).T)
        # Absent entries may hold anything (NaN included): zero them, so that they weigh nothing in the products.
        np.copyto(mu_t, 0.0, where=~present_t)
        np.copyto(nu_t, 0.0, where=~present_t)
        # Reliabilities stay positive for everyone who judged anything, so which entries have company in their cell
        # (and so an "others' consensus") never changes: fix it once. Whole-number counts: exact in any order.
        if rule.exclude_self:
            company = np.count_nonzero(present_t, axis=0) > 1
            counted_t = np.logical_and(present_t, company).astype(np.float64)
        else:
            counted_t = weight_t
        return cls(
            rule=rule,
            mu_t=mu_t,
            nu_t=nu_t,
            weight_t=weight_t,
            counted_t=counted_t,
            prior=prior,
            with_company=with_company,
            n_items_judged=n_items_judged,
            d_mu=np.empty_like(mu_t),
            d_nu=np.empty_like(nu_t),
            squared=np.empty_like(mu_t),
        )

    def consensus_of(self, reliability: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        total = np.asarray(reliability @ self.weight_t, dtype=np.float64)
        safe = np.where(total > 0.0, total, 1.0)
        return (
            np.asarray(reliability @ self.mu_t, dtype=np.float64) / safe,
            np.asarray(reliability @ self.nu_t, dtype=np.float64) / safe,
            total,
        )

    def shrunk(self, distance_total: FloatArray) -> FloatArray:
        """β from each annotator's distance sum, pooled with ``prior_items`` pseudo-items at the mean distance."""
        rule = self.rule
        if rule.prior_items > 0:
            items_measured = self.with_company.sum() if rule.exclude_self else float(self.n_items_judged.sum())
            pooled = float(distance_total.sum()) / items_measured if items_measured > 0 else 0.0
            distance_total = distance_total + rule.prior_items * pooled
        return np.asarray(self.prior / np.maximum(distance_total, rule.min_total_distance), dtype=np.float64)

    def reliability_from(self, c_mu: FloatArray, c_nu: FloatArray, total: FloatArray, used: FloatArray) -> FloatArray:
        d_mu, d_nu, squared = self.d_mu, self.d_nu, self.squared
        np.subtract(self.mu_t, c_mu, out=d_mu)
        np.subtract(self.nu_t, c_nu, out=d_nu)
        if self.rule.distance == "szmidt_kacprzyk":
            np.add(d_mu, d_nu, out=squared)
            np.multiply(squared, d_mu, out=squared)  # Δμ(Δμ + Δν) + (Δν)² = ½[(Δμ)² + (Δν)² + (Δπ)²]
        else:
            np.multiply(d_mu, d_mu, out=squared)
        np.multiply(d_nu, d_nu, out=d_nu)
        np.add(squared, d_nu, out=squared)
        if not self.rule.exclude_self:
            return self.shrunk(np.asarray(np.einsum("kc,kc->k", squared, self.weight_t), dtype=np.float64))
        # The others' consensus differs from everyone's by a factor: own − c₋ₖ = T/(T − βₖ)·(own − c), T being
        # the cell's total reliability, so the distance to the others needs no second consensus.
        cell_total = np.where(total > 0.0, total, 1.0)
        factor = d_mu
        np.multiply(self.counted_t, used[:, None], out=factor)
        np.subtract(cell_total, factor, out=factor)
        # T − βₖ is a sum of the others' positive reliabilities; the floor only guards against rounding.
        np.maximum(factor, 1e-12 * cell_total, out=factor)
        np.divide(cell_total, factor, out=factor)
        np.multiply(factor, factor, out=factor)
        np.multiply(factor, self.counted_t, out=factor)
        # Σ_c squared · factor, each annotator's row summed along the cells.
        return self.shrunk(np.asarray(np.einsum("kc,kc->k", squared, factor), dtype=np.float64))

    def fixed_point(self, *, max_iter: int, tol: float) -> _FixedPoint:
        """Updates from equal reliabilities until the consensus stops moving; then, as crowd-kit does, the
        reliabilities implied by the final consensus."""
        reliability = np.ones(self.mu_t.shape[0])
        c_mu, c_nu, total = self.consensus_of(reliability)
        history: list[float] = []
        converged = False
        iterations = 0
        while iterations < max_iter and not converged:
            iterations += 1
            updated_reliability = self.reliability_from(c_mu, c_nu, total, reliability)
            new_mu, new_nu, new_total = self.consensus_of(updated_reliability)
            change = np.sum((new_mu - c_mu) ** 2 + (new_nu - c_nu) ** 2)
            size = np.sum(new_mu * new_mu + new_nu * new_nu)
            loss = float(change / size) if size > 0 else 0.0
            history.append(loss)
            converged = loss < tol
            reliability, c_mu, c_nu, total = updated_reliability, new_mu, new_nu, new_total
        reliability = self.reliability_from(c_mu, c_nu, total, reliability)
        return _FixedPoint(reliability, c_mu, c_nu, total, iterations, converged, history)
