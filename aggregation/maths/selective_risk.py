"""Selective risk: a confidence threshold with a Learn-then-Test guarantee on the error among the labels it accepts.
Pure numpy, no Django.

The model labels an item alone when its confidence is at least λ. Its *selective risk* at λ is
R(λ) = E[ℓ | confidence ≥ λ], with ℓ ∈ [0, 1] the share of blind people who disagree with the model on the item. The
contract picks λ from blind labels such that, with probability at least 1 − δ over the blind sample,
R(λ̂) ≤ α: "among the labels the model gives alone, at most α disagree with people".

**Learn-then-Test** (Angelopoulos, Bates, Candès, Jordan and Lei 2021, "Learn then Test: calibrating predictive
algorithms to achieve risk control", arXiv 2110.01052): each candidate λ is a null hypothesis H_λ: R(λ) > α with a
valid p-value, and a family-wise error controlling procedure picks the λ whose nulls it rejects. Here the procedure is
fixed-sequence testing (LTT §4.1): the candidates are ordered from the highest confidence down *before* the labels
are seen (the order uses confidences and the sample's size only, never the losses), each is tested at level δ, and
the sequence stops at the first that is not rejected; FWER ≤ δ without a multiplicity correction, because a null
can only be reached once every more conservative one has been rejected. λ̂ is the last rejected.

**p-value**: Hoeffding-Bentkus (Bates, Angelopoulos, Lei, Malik and Jordan 2021, "Distribution-free, risk-controlling
prediction sets", JACM 68(6), Prop. 3 and §3.1.3): with R̂ the mean loss of the n sampled items of the cell,
p = min(exp(−n·h(min(R̂, α), α)), e·P(Binomial(n, α) ≤ ⌈n R̂⌉)), h(a, b) = a log(a/b) + (1 − a) log((1 − a)/(1 − b)).
Both bounds hold for losses in [0, 1] sampled independently, and for a simple random sample without replacement
from the cell too: Hoeffding (1963, "Probability inequalities for sums of bounded random variables", JASA 58, §6)
shows that the moment-generating-function bounds of sampling with replacement hold for sampling without it.

**Assumptions checked** (:func:`selective_risk`): the sample of each tested cell must be *uniform* (equal inclusion
probabilities, within 1 %): a stratified draw with unequal rates, as calibration's equal allocation across confidence
bins, is a uniform sample of each bin but not of their union, and the binomial p-value would then be wrong (a
weighted mean is not a binomial count). A cell whose sample is not uniform, or which has fewer than
``min_items`` sampled items, is not tested: when it is the first cell that could be, the contract is withheld with
the reason; later, the sequence stops there. Cells at the top with fewer items than the minimum are skipped (a rule
on the sample size only, fixed before the losses are seen).

tests/maths/contract_simulation.py checks the guarantee on known truths: the rate at which R(λ̂) > α stays below δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

#: Inclusion probabilities within this relative spread count as equal (rounding of a proportional allocation).
UNIFORM_TOLERANCE = 0.01
#: Candidate thresholds: the suggestion's confidence lies in [0.5, 1].
DEFAULT_THRESHOLDS = tuple(round(0.5 + 0.05 * k, 2) for k in range(10))


def _kl_bernoulli(a: float, b: float) -> float:
    a = min(max(a, 0.0), 1.0)
    terms = 0.0
    if a > 0:
        terms += a * math.log(a / b)
    if a < 1:
        terms += (1 - a) * math.log((1 - a) / (1 - b))
    return terms


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) ≤ k), summed in log space (n up to a few thousand)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    j = np.arange(k + 1, dtype=np.float64)
    log_pmf = (
        math.lgamma(n + 1)
        - np.array([math.lgamma(x + 1) for x in j])
        - np.array([math.lgamma(n - x + 1) for x in j])
        + j * math.log(p)
        + (n - j) * math.log1p(-p)
    )
    top = float(log_pmf.max())
    return float(min(1.0, math.exp(top) * np.exp(log_pmf - top).sum()))


def items_to_pass(risk: float, alpha: float, delta: float, limit: int = 100_000) -> int:
    """The fewest items whose mean loss ``risk`` would give a Hoeffding-Bentkus p-value ≤ ``delta`` against
    ``alpha`` (``limit`` when none up to it would: a risk at or above α never passes)."""
    if risk >= alpha:
        return limit
    low, high = 1, 1
    while hoeffding_bentkus_p(risk, high, alpha) > delta:
        if high >= limit:
            return limit
        low, high = high, min(2 * high, limit)
    while low < high:
        mid = (low + high) // 2
        if hoeffding_bentkus_p(risk, mid, alpha) <= delta:
            high = mid
        else:
            low = mid + 1
    return high


def hoeffding_bentkus_p(risk: float, n: int, alpha: float) -> float:
    """The Hoeffding-Bentkus p-value of H: true risk > ``alpha`` from the mean loss ``risk`` of ``n`` items."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    if n <= 0:
        return 1.0
    hoeffding = math.exp(-n * _kl_bernoulli(min(risk, alpha), alpha))
    bentkus = math.e * _binomial_cdf(math.ceil(n * risk - 1e-9), n, alpha)
    return float(min(1.0, hoeffding, bentkus))


@dataclass(frozen=True)
class CellTest:
    threshold: float
    items: int
    risk: float
    p_value: float | None
    rejected: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "items": self.items,
            "risk": self.risk,
            "p_value": self.p_value,
            "rejected": self.rejected,
            "note": self.note,
        }


@dataclass(frozen=True)
class SelectiveRisk:
    """The contract's verdict: ``threshold`` (λ̂, None when none is certified), the estimated ``share`` of the
    model's items at or above it, the blind ``items`` behind it, and every cell tested."""

    verdict: str  # "holds", "fails" or "withheld"
    reason: str
    target: float
    delta: float
    threshold: float | None
    share: float | None
    items: int
    risk: float | None
    cells: list[CellTest] = field(default_factory=list)

    def sentence(self) -> str:
        if self.threshold is None:
            return (
                f"No confidence threshold is certified: no cell of the model's labels showed, at {1 - self.delta:.0%} "
                f"confidence, at most {self.target:.0%} disagreement with blind people."
            )
        share = "" if self.share is None else f" ({self.share:.0%} of its items)"
        return (
            f"With {1 - self.delta:.0%} confidence, at most {self.target:.0%} of the model's labels with confidence "
            f"≥ {self.threshold:.2f}{share} disagree with a blind person (Learn-then-Test, n = {self.items})."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": "selective_risk",
            "verdict": self.verdict,
            "reason": self.reason,
            "sentence": self.sentence() if self.verdict != "withheld" else "",
            "n": self.items,
            "target": self.target,
            "delta": self.delta,
            "threshold": self.threshold,
            "share": self.share,
            "risk": self.risk,
            "cells": [c.as_dict() for c in self.cells],
        }


def selective_risk(
    loss: ArrayLike,
    confidence: ArrayLike,
    probability: ArrayLike,
    *,
    target: float,
    delta: float = 0.05,
    min_items: int = 30,
    thresholds: ArrayLike | None = None,
) -> SelectiveRisk:
    """Learn-then-Test over confidence thresholds (module docstring). One entry per blind-sampled item: its loss in
    [0, 1] (share of blind people disagreeing with the model), the model's confidence (NaN: none, never accepted)
    and its inclusion probability. ``thresholds`` default to :data:`DEFAULT_THRESHOLDS`: a coarse grid, because
    fixed-sequence testing stops at the first cell it cannot reject and a step of one item would stop it at the
    first unlucky label."""
    ell = np.asarray(loss, dtype=np.float64).ravel()
    conf = np.asarray(confidence, dtype=np.float64).ravel()
    pi = np.asarray(probability, dtype=np.float64).ravel()
    if not ell.shape == conf.shape == pi.shape:
        raise ValueError("loss, confidence and probability need one entry per item")
    if np.any((ell < 0) | (ell > 1)):
        raise ValueError("losses must lie in [0, 1]")
    if np.any(~(pi > 0) | (pi > 1)):
        raise ValueError("inclusion probabilities must lie in (0, 1]")
    if not 0 < target < 1 or not 0 < delta < 1:
        raise ValueError("target and delta must lie in (0, 1)")
    known = ~np.isnan(conf)
    grid = np.unique(np.asarray(DEFAULT_THRESHOLDS if thresholds is None else thresholds, dtype=np.float64))
    weight = np.where(known, 1.0 / pi, 0.0)
    start = max(min_items, 2 * items_to_pass(0.0, target, delta))
    cells: list[CellTest] = []
    best: CellTest | None = None
    for lam in grid[::-1]:
        inside = known & (conf >= lam)
        n = int(inside.sum())
        risk = float(ell[inside].mean()) if n else math.nan
        if n < start and not cells:
            continue  # the top of the sequence, too small to pass unless flawless: decided on n alone
        if n < min_items:
            cells.append(CellTest(float(lam), n, risk, None, False, f"fewer than {min_items} items"))
            break
        spread = pi[inside].max() / pi[inside].min() - 1.0
        if spread > UNIFORM_TOLERANCE:
            note = (
                f"not a uniform sample: inclusion probabilities {pi[inside].min():.3g}-{pi[inside].max():.3g} "
                "(a draw in one stratum, as certification's, gives one)"
            )
            cells.append(CellTest(float(lam), n, risk, None, False, note))
            break
        p = hoeffding_bentkus_p(risk, n, target)
        cell = CellTest(float(lam), n, risk, p, p <= delta)
        cells.append(cell)
        if not cell.rejected:
            break
        best = cell
    if not cells:
        return SelectiveRisk(
            "withheld", f"fewer than {min_items} blind items in every confidence cell", target, delta, None, None,
            int(known.sum()), None,
        )  # fmt: skip
    if cells[0].p_value is None:
        return SelectiveRisk("withheld", cells[0].note, target, delta, None, None, cells[0].items, None, cells)
    if best is None:
        reason = f"the most confident cell shows risk {cells[0].risk:.3f} (p = {cells[0].p_value:.3f} > {delta})"
        return SelectiveRisk("fails", reason, target, delta, None, None, cells[0].items, None, cells)
    share = float(weight[known & (conf >= best.threshold)].sum() / weight[known].sum()) if weight.any() else None
    reason = f"certified down to confidence {best.threshold:.2f}"
    if cells[-1] is not best:
        reason += f"; the sequence stopped at {cells[-1].threshold:.2f} ({cells[-1].note or 'not rejected'})"
    return SelectiveRisk("holds", reason, target, delta, best.threshold, share, best.items, best.risk, cells)


__all__ = [
    "DEFAULT_THRESHOLDS",
    "CellTest",
    "SelectiveRisk",
    "hoeffding_bentkus_p",
    "items_to_pass",
    "selective_risk",
]
