"""Decisions from the design-based accuracy estimates: calibration, certification, audit, verification. Pure numpy,
no Django.

* **Evidence** (:func:`evidence_mask`): only blind labels given on calibration, certification or audit requests
  are evidence about the model's accuracy. Those items were drawn with a recorded inclusion probability and nobody
  saw the model's answer before or after labelling. Verification answers are given with the model's answer on
  screen: they measure acceptance (keep and change rates), never accuracy, and are dropped here whatever else
  their rows say.
* **Calibration** (:func:`calibration_curve`): the Hájek accuracy per confidence bin, each with its interval.
* **Lowest certifiable confidence** (:func:`lowest_certifiable_confidence`): the cut c such that the model's labels
  with confidence ≥ c have a lower bound ≥ the threshold, found by testing the cuts from the highest down and
  stopping at the first failure. That fixed-sequence order keeps the chance of certifying any set of labels that
  truly falls short at the interval's 2.5 % without a multiple-testing correction: a cut is only tested once every
  higher cut has passed. Picking the best-looking cut after looking at all of them would not.
* **Certification** (:func:`certification_decision`): certified when the evidence reaches a minimum number of
  items and the interval's lower bound is at least the threshold.
* **Audit** (:func:`audit_check`): after a handoff or certification, a continuing Poisson sample of the model's
  labels is checked blind, and every new answer is a new look. Suspending whenever a fixed-level lower bound dipped
  below the threshold at some look made 6.6 % of audits suspend a model whose accuracy never dropped (200 looks,
  each a fresh 2.5 % chance). The audit is therefore a sequential test by betting (Shafer 2021, "Testing by
  betting", JRSS A 184(2); Waudby-Smith and Ramdas 2024, "Estimating means of bounded random variables by
  betting", JRSS B 86(1), §3 and the aGRAPA bet of §B): against H0 "the model's agreement on the audited items is at
  least the threshold θ", a gambler starting with wealth 1 stakes λ_t on each answer y_t ∈ [0, 1],
  K_t = Π_{s≤t} (1 + λ_s (θ − y_s)), with λ_s ≥ 0 chosen from the answers before s only (the last
  :data:`BET_WINDOW`: it bets when they look below θ, nothing otherwise). Under H0 K is a nonnegative
  supermartingale however the accuracy moves as long as it stays ≥ θ, so by Ville's inequality the chance that K
  *ever* reaches 1/α over the whole audit, at any number of looks, is at most α (5 %). The handoff is suspended
  once it has: a drop shows as wealth growing at about KL(accuracy after ‖ θ) per answer, and the good answers before
  it cost little because nothing was staked on them. The price: a model that falls only just below θ is caught
  slowly (the test needs evidence that it is below, not a missing proof that it is above); the simulation reports
  the false-suspension rate and the delay (tests/maths/certification_simulation.py). The running Hájek estimate over
  the last ``window`` answers is reported beside it for the dashboard. An item's answer is its share of agreeing
  labels when the audit is checked: a second label arriving later revises an answer already bet on, a small
  departure from the betting order that the simulation (one label per audited item) does not cover.
* **Verification** (:func:`verification_rates`): keep and change rates, with the cluster interval over items of
  :mod:`aggregation.maths.intervals` (several people may verify one item).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.accuracy import DesignEstimate, hajek
from aggregation.maths.intervals import cluster_proportion_interval

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
AuditState = Literal["collecting", "passing", "suspend"]

#: Request kinds whose blind labels are evidence about the model (items drawn with a recorded probability).
EVIDENCE_KINDS = ("calibration", "certification", "audit")
VERIFICATION = "verification"
REQUEST_KINDS = (*EVIDENCE_KINDS, VERIFICATION)


def evidence_mask(kinds: ArrayLike, blind: ArrayLike) -> BoolArray:
    """Which label rows may enter the accuracy estimators: blind rows of calibration, certification or audit
    requests. Verification rows never do, blind or not (they were not drawn with a known probability)."""
    k = np.asarray(kinds, dtype=object).ravel()
    b = np.asarray(blind, dtype=bool).ravel()
    if k.shape != b.shape:
        raise ValueError("kinds and blind need one entry per label")
    unknown = set(k.tolist()) - set(REQUEST_KINDS)
    if unknown:
        raise ValueError(f"unknown request kinds {sorted(unknown)}")
    return np.isin(k, EVIDENCE_KINDS) & b


@dataclass(frozen=True)
class BinEstimate:
    low: float
    high: float
    estimate: DesignEstimate

    def as_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, **self.estimate.as_dict()}


def _in_range(confidence: FloatArray, low: float, high: float, last: bool) -> BoolArray:
    return (confidence >= low) & ((confidence <= high) if last else (confidence < high))


def calibration_curve(
    values: ArrayLike,
    probability: ArrayLike,
    confidence: ArrayLike,
    edges: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    trials: ArrayLike | None = None,
    level: float = 0.95,
) -> list[BinEstimate]:
    """Hájek accuracy in each confidence bin [edges[b], edges[b+1]) (the last bin closed) over the drawn items,
    with its interval; ``values`` NaN where an item has no evidence yet."""
    y = np.asarray(values, dtype=np.float64).ravel()
    c = np.asarray(confidence, dtype=np.float64).ravel()
    e = np.asarray(edges, dtype=np.float64).ravel()
    if c.shape != y.shape:
        raise ValueError("values and confidence need one entry per drawn item")
    out = []
    for b in range(e.size - 1):
        inside = _in_range(c, float(e[b]), float(e[b + 1]), b == e.size - 2)
        estimate = hajek(np.where(inside, y, np.nan), probability, strata=strata, trials=trials, level=level)
        out.append(BinEstimate(float(e[b]), float(e[b + 1]), estimate))
    return out


@dataclass(frozen=True)
class Decision:
    certified: bool
    reason: str
    estimate: DesignEstimate
    threshold: float
    minimum: int
    more_needed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "certified": self.certified,
            "reason": self.reason,
            "estimate": self.estimate.as_dict(),
            "threshold": self.threshold,
            "minimum": self.minimum,
            "more_needed": self.more_needed,
        }


def certification_decision(estimate: DesignEstimate, *, threshold: float, minimum: int = 30) -> Decision:
    """Certified when at least ``minimum`` drawn items have blind evidence and the lower bound of the interval of
    the model's accuracy is at least ``threshold``."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must lie in [0, 1]")
    more = max(0, minimum - estimate.items)

    def decide(certified: bool, reason: str) -> Decision:
        return Decision(certified, reason, estimate, threshold, minimum, more)

    if estimate.value is None or estimate.ci is None:
        return decide(False, "no blind evidence from calibration, certification or audit requests")
    if more:
        return decide(False, f"{estimate.items} items with blind evidence of the {minimum} required: {more} more")
    low = estimate.ci[0]
    if low >= threshold:
        return decide(True, f"lower bound {low:.3f} of the model's accuracy reaches the threshold {threshold:.3f}")
    return decide(
        False, f"lower bound {low:.3f} of the model's accuracy ({estimate.value:.3f}) is below {threshold:.3f}"
    )


@dataclass(frozen=True)
class CutDecision:
    cut: float | None  # the lowest certified confidence, None when even the top bin fails
    tested: list[tuple[float, Decision]] = field(default_factory=list)


def lowest_certifiable_confidence(
    values: ArrayLike,
    probability: ArrayLike,
    confidence: ArrayLike,
    edges: ArrayLike,
    *,
    threshold: float,
    minimum: int = 30,
    strata: ArrayLike | None = None,
    trials: ArrayLike | None = None,
    level: float = 0.95,
) -> CutDecision:
    """The lowest edge c such that the labels with confidence ≥ c, and those above every higher edge, are each
    certified (fixed-sequence test from the top; module docstring)."""
    y = np.asarray(values, dtype=np.float64).ravel()
    c = np.asarray(confidence, dtype=np.float64).ravel()
    e = np.asarray(edges, dtype=np.float64).ravel()
    cut: float | None = None
    tested: list[tuple[float, Decision]] = []
    for edge in e[-2::-1]:
        estimate = hajek(np.where(c >= edge, y, np.nan), probability, strata=strata, trials=trials, level=level)
        decision = certification_decision(estimate, threshold=threshold, minimum=minimum)
        tested.append((float(edge), decision))
        if not decision.certified:
            break
        cut = float(edge)
    return CutDecision(cut, tested)


#: How many recent answers set the audit's next stake: short enough that a drop is bet on within a few answers.
BET_WINDOW = 20
#: The most of its wealth the audit stakes on one answer (a fraction of the largest bet that could ruin it).
MAX_STAKE = 0.5


@dataclass(frozen=True)
class AuditStatus:
    state: AuditState
    reason: str
    estimate: DesignEstimate
    evidence: float = 1.0  # the running maximum of the wealth K_t: suspended at 1/α
    suspended_at: int | None = None  # the answer (counted from 1) at which K first reached 1/α

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "reason": self.reason,
            "estimate": self.estimate.as_dict(),
            "evidence": self.evidence,
            "suspended_at": self.suspended_at,
        }


def audit_wealth(values: ArrayLike, *, threshold: float, bet_window: int = BET_WINDOW) -> FloatArray:
    """The betting wealth K_t after each answer y_t, in order (module docstring). Each stake uses earlier answers
    only, so the wealth after t answers never changes when later answers arrive."""
    y = np.asarray(values, dtype=np.float64).ravel()
    if np.any(np.isnan(y)) or np.any((y < 0.0) | (y > 1.0)):
        raise ValueError("answers must lie in [0, 1]")
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must lie in (0, 1]")
    if bet_window < 2:
        raise ValueError("bet_window must be at least 2")
    cap = MAX_STAKE / max(1.0 - threshold, 1e-9)  # 1 + λ(θ − y) ≥ 1 − MAX_STAKE > 0 for every y ≤ 1
    log_wealth = 0.0
    out = np.empty(y.size, dtype=np.float64)
    for t in range(y.size):
        recent = y[max(0, t - bet_window) : t]
        stake = 0.0
        if recent.size >= 2:
            # aGRAPA: λ = (θ − μ̂)/(σ̂² + (θ − μ̂)²), the growth-optimal stake to second order; the variance gets a
            # prior of 1/4 with the weight of one answer, so a run of identical answers does not bet everything.
            gap = threshold - float(recent.mean())
            spread = (float(recent.var()) * recent.size + 0.25) / (recent.size + 1)
            stake = min(max(gap / (spread + gap * gap), 0.0), cap)
        log_wealth += math.log1p(stake * (threshold - y[t]))
        out[t] = math.exp(log_wealth)
    return out


def audit_check(
    values: ArrayLike,
    probability: ArrayLike,
    *,
    threshold: float,
    minimum: int = 30,
    window: int | None = None,
    trials: ArrayLike | None = None,
    level: float = 0.95,
) -> AuditStatus:
    """The audit's verdict on the audited items so far, in the order they were answered (NaN = not answered yet):
    ``collecting`` below ``minimum`` answered items, then ``suspend`` once the betting wealth has reached 1/α with
    α = 1 − ``level`` at any answer so far (module docstring), else ``passing``. The estimate is the running Hájek
    estimate of the last ``window`` answered items (or all). One Poisson rate per audit: every audited item is one
    uniform draw of the handed-off items, so the answers are bet on unweighted."""
    y = np.asarray(values, dtype=np.float64).ravel()
    p = np.asarray(probability, dtype=np.float64).ravel()
    t = np.ones(y.size) if trials is None else np.asarray(trials, dtype=np.float64).ravel()
    answered = np.flatnonzero(~np.isnan(y))
    shown = answered
    if window is not None:
        if window < 2:
            raise ValueError("window must be at least 2")
        shown = answered[-window:]
    estimate = hajek(y[shown], p[shown], trials=t[shown], level=level)
    if answered.size < minimum:
        return AuditStatus("collecting", f"{answered.size} audited items of the {minimum} needed", estimate)
    wealth = audit_wealth(y[answered], threshold=threshold)
    bar = 1.0 / (1.0 - level)
    evidence = float(wealth.max()) if wealth.size else 1.0
    if evidence >= bar:
        at = int(np.argmax(wealth >= bar)) + 1
        return AuditStatus(
            "suspend",
            f"after {at} audit answers the evidence that the model's agreement fell below the threshold "
            f"{threshold:.3f} reached {bar:.0f} (at most a {1.0 - level:.0%} chance over the whole audit if it had "
            "not): handoff suspended",
            estimate,
            evidence,
            at,
        )
    return AuditStatus(
        "passing",
        f"no evidence that the model's agreement fell below the threshold {threshold:.3f} "
        f"(evidence {evidence:.1f} of the {bar:.0f} that suspends)",
        estimate,
        evidence,
    )


@dataclass(frozen=True)
class VerificationRates:
    keep: float | None
    keep_ci: tuple[float, float] | None
    change: float | None
    change_ci: tuple[float, float] | None
    answers: int
    items: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "keep_ci": list(self.keep_ci) if self.keep_ci else None,
            "change": self.change,
            "change_ci": list(self.change_ci) if self.change_ci else None,
            "answers": self.answers,
            "items": self.items,
        }


def verification_rates(kept: ArrayLike, item_index: ArrayLike, level: float = 0.95) -> VerificationRates:
    """Keep and change rates of verification answers (``kept`` 1 when the person kept the model's answer), each
    with the cluster interval over items. Change = 1 − keep, its interval the mirror image."""
    k = np.asarray(kept, dtype=np.float64).ravel()
    idx = np.asarray(item_index, dtype=np.int64).ravel()
    if k.shape != idx.shape:
        raise ValueError("kept and item_index need one entry per answer")
    if k.size == 0:
        return VerificationRates(None, None, None, None, 0, 0)
    _, inverse = np.unique(idx, return_inverse=True)
    successes = np.bincount(inverse, weights=k)
    trials = np.bincount(inverse).astype(np.float64)
    keep = float(k.mean())
    ci = cluster_proportion_interval(successes, trials, level)
    change_ci = None if ci is None else (1.0 - ci[1], 1.0 - ci[0])
    return VerificationRates(keep, ci, 1.0 - keep, change_ci, int(k.size), int(successes.size))


__all__ = [
    "BET_WINDOW",
    "EVIDENCE_KINDS",
    "REQUEST_KINDS",
    "VERIFICATION",
    "AuditStatus",
    "BinEstimate",
    "CutDecision",
    "Decision",
    "audit_check",
    "audit_wealth",
    "calibration_curve",
    "certification_decision",
    "evidence_mask",
    "lowest_certifiable_confidence",
    "verification_rates",
]
