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
  labels is checked blind. Once ``minimum`` audited items have answers, the handoff is suspended as soon as the
  lower bound of the running estimate (over the whole audit, or the last ``window`` audited items) falls below the
  threshold: the model must keep earning the decision. Checked again at every new answer, this sequential test
  suspends more often than 2.5 % of the time when accuracy stays just above the threshold; a lead should set the
  threshold with margin (the simulation reports the false-suspension rate).
* **Verification** (:func:`verification_rates`): keep and change rates, with the cluster interval over items of
  :mod:`aggregation.intervals` (several people may verify one item).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.accuracy import DesignEstimate, hajek
from aggregation.intervals import cluster_proportion_interval

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


@dataclass(frozen=True)
class AuditStatus:
    state: AuditState
    reason: str
    estimate: DesignEstimate


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
    """The audit's verdict on the audited items so far, in the order they were drawn (NaN = not answered yet):
    ``collecting`` below ``minimum`` answered items, then ``suspend`` when the lower bound of the running Hájek
    estimate (the last ``window`` answered items, or all) is below ``threshold``, else ``passing``."""
    y = np.asarray(values, dtype=np.float64).ravel()
    p = np.asarray(probability, dtype=np.float64).ravel()
    t = np.ones(y.size) if trials is None else np.asarray(trials, dtype=np.float64).ravel()
    answered = np.flatnonzero(~np.isnan(y))
    if window is not None:
        if window < 2:
            raise ValueError("window must be at least 2")
        answered = answered[-window:]
    estimate = hajek(y[answered], p[answered], trials=t[answered], level=level)
    if estimate.items < minimum:
        return AuditStatus("collecting", f"{estimate.items} audited items of the {minimum} needed", estimate)
    low = estimate.lower
    assert low is not None
    if low < threshold:
        return AuditStatus(
            "suspend",
            f"audit lower bound {low:.3f} fell below the threshold {threshold:.3f}: handoff suspended",
            estimate,
        )
    return AuditStatus("passing", f"audit lower bound {low:.3f} is at least the threshold {threshold:.3f}", estimate)


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
    "EVIDENCE_KINDS",
    "REQUEST_KINDS",
    "VERIFICATION",
    "AuditStatus",
    "BinEstimate",
    "CutDecision",
    "Decision",
    "audit_check",
    "calibration_curve",
    "certification_decision",
    "evidence_mask",
    "lowest_certifiable_confidence",
    "verification_rates",
]
