"""Human vs LLM figures for the blind-sample method: agreement, anchoring gap, handoff. Pure numpy, no Django.

* **Blind agreement**: the model's agreement with unaided people on the population of items it would label,
  estimated over the fixed random blind sample (:func:`design_agreement`): per sampled item the share of its unexposed
  labels that equal the suggestion, weighted by 1/π of the item's inclusion probability (Hájek). It is not the model's
  accuracy: the people err too (annotators right 90 % of the time cap a perfect model's agreement near 0.9), and on
  a subjective task human-human agreement is its ceiling.
* **Unaided agreement**: the same share pooled over every label saved without exposure, wherever it came from (the
  blind sample, label requests drawn by confidence, after-label first saves, imports). It describes those labels,
  not the population: a draw that oversamples hard items pulls it down.
* **Model vs gold**: on items with a gold preference, the share where the suggestion equals gold: the model's
  accuracy against the reference answer (one comparison per item).
* **Shown agreement**: the same as blind agreement on labels saved after seeing the suggestion.
* **Anchoring gap** = shown − blind; reported only when both sides have at least ``minimum`` (5) comparisons,
  otherwise ``value`` is None and the result says how many more are needed.
* **Handoff**: whether blind agreement clears the project threshold on enough comparisons, by the point estimate
  or, stricter, by the lower end of its interval.

Every interval treats items as the independent units (several labels of one item are not independent), with the
methods of :mod:`aggregation.maths.intervals`. All figures are :class:`aggregation.maths.agreement.Estimate` values
(``value``,
``n``, ``ci``; ``as_dict()`` for JSON); :func:`figure` withholds one with fewer than 5 comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths import accuracy
from aggregation.maths.agreement import Estimate
from aggregation.maths.intervals import cluster_difference_interval, cluster_proportion_interval
from aggregation.maths.minimums import MIN_COMPARISONS

HandoffRule = Literal["point", "lower_bound"]
MINIMUM_GAP_COMPARISONS = 5
#: Below this many comparisons a figure is withheld ("needs 5 comparisons"): a share of 1 or 2 comparisons, with an
#: interval, looks precise and is noise.
MINIMUM_COMPARISONS = MIN_COMPARISONS


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie in (0, 1)")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion ``successes``/``n``; None when n = 0.

    Unlike the normal approximation it stays inside [0, 1] and is sensible at 0/n and n/n, which matters for the
    small blind samples a project starts with (8/10 gives about (0.490, 0.943)).
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError("need 0 <= successes <= n")
    if n == 0:
        return None
    z = _z(level)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half_width = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def per_item_counts(matches: ArrayLike, items: ArrayLike) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Matches and comparisons per distinct item (in sorted item order)."""
    m, ids = _comparisons(matches, items)
    _, index = np.unique(ids, return_inverse=True)
    index = index.ravel()
    return np.bincount(index, weights=m.astype(np.float64)), np.bincount(index).astype(np.float64)


def agreement_estimate(matches: ArrayLike, items: ArrayLike | None = None, level: float = 0.95) -> Estimate:
    """Share of True in ``matches`` (one bool per comparison) with its 95 % interval.

    ``items`` gives the item of each comparison: the interval is then the clustered Wilson interval over items
    (:func:`intervals.cluster_proportion_interval`), because several labels of one item are not independent.
    Without ``items`` every comparison is taken as independent (plain Wilson): only right when each item gives one
    comparison.
    """
    m = np.asarray(matches, dtype=bool).ravel()
    n = int(m.size)
    successes = int(m.sum())
    if items is None:
        return Estimate(value=successes / n if n else None, n=n, ci=wilson_interval(successes, n, level))
    per_item_matches, per_item_n = per_item_counts(m, items)
    ci = cluster_proportion_interval(per_item_matches, per_item_n, level)
    return Estimate(value=successes / n if n else None, n=n, ci=ci)


def figure(estimate: Estimate, minimum: int = MINIMUM_COMPARISONS) -> dict[str, Any]:
    """``estimate.as_dict()`` plus ``reason``; with fewer than ``minimum`` comparisons ``value`` and ``ci`` are None
    and ``reason`` says "needs 5 comparisons (n so far)", so no page shows a share of two labels as a figure."""
    if estimate.n < minimum:
        return {
            "value": None,
            "n": estimate.n,
            "ci": None,
            "reason": f"needs {minimum} comparisons ({estimate.n} so far)",
        }
    return {**estimate.as_dict(), "reason": None}


def design_agreement(
    matches: ArrayLike, items: ArrayLike, probability: ArrayLike, level: float = 0.95
) -> accuracy.DesignEstimate:
    """Blind agreement over a random sample of items: the Hájek estimate of the population mean of the per-item
    share of labels that agree with the model, each item weighted by 1/π (its inclusion probability, one per label
    row, equal within an item). Items are the clusters, so an item with more labels weighs no more than another:
    a label request that adds labels to hard items leaves the estimate's expectation where it was.
    The interval is :func:`aggregation.maths.accuracy.hajek`'s (two-stage variance, Wilson on the effective n)."""
    m, ids = _comparisons(matches, items)
    p = np.asarray(probability, dtype=np.float64).ravel()
    if p.shape != m.shape:
        raise ValueError("probability needs one entry per comparison")
    if not m.size:
        return accuracy.hajek(np.zeros(0), np.zeros(0), level=level)
    unique, index = np.unique(ids, return_inverse=True)
    share, trials = accuracy.per_item_agreement(index.ravel(), m, unique.size)
    item_probability = np.zeros(unique.size)
    item_probability[index.ravel()] = p
    return accuracy.hajek(share, item_probability, trials=trials, level=level)


def design_figure(estimate: accuracy.DesignEstimate, minimum: int = MINIMUM_COMPARISONS) -> dict[str, Any]:
    """:func:`figure` for a design-based estimate: ``n`` counts its labels, ``items`` the sampled items."""
    base = figure(Estimate(value=estimate.value, n=estimate.labels, ci=estimate.ci), minimum)
    se = estimate.se if base["value"] is not None else None
    return {**base, "items": estimate.items, "se": se, "method": estimate.method}


@dataclass(frozen=True, kw_only=True)
class AnchoringGap(Estimate):
    """Shown − blind agreement; ``n`` is the number of comparisons on both sides together.

    ``more_needed`` says how many more comparisons each side needs before the gap is reported (0 when enough);
    ``hint`` says the same in words, or is None when the gap is reported.
    """

    shown: Estimate
    blind: Estimate
    minimum: int
    more_needed: dict[str, int] = field(default_factory=dict)
    hint: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            **super().as_dict(),
            "shown": self.shown.as_dict(),
            "blind": self.blind.as_dict(),
            "minimum": self.minimum,
            "more_needed": dict(self.more_needed),
            "hint": self.hint,
        }


def _comparisons(matches: ArrayLike, items: ArrayLike) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    m = np.asarray(matches, dtype=bool).ravel()
    ids = np.asarray(items).ravel()
    if m.shape != ids.shape:
        raise ValueError("matches and items must have one entry per comparison")
    return m, ids


def anchoring_gap(
    shown_matches: ArrayLike,
    shown_items: ArrayLike,
    blind_matches: ArrayLike,
    blind_items: ArrayLike,
    minimum: int = MINIMUM_GAP_COMPARISONS,
    level: float = 0.95,
) -> AnchoringGap:
    """Anchoring gap = shown agreement − blind agreement, with an interval over items.

    ``*_matches`` hold one bool per comparison (human label vs LLM suggestion) and ``*_items`` the item id of
    each. Items are the units because labels of one item are not independent: the interval is the MOVER interval
    of :func:`intervals.cluster_difference_interval` on per-item counts, which keeps the pairing of an item's shown
    and blind labels. ``value`` is None (and ``ci`` too) while either side has fewer than ``minimum`` comparisons.
    """
    if minimum < 1:
        raise ValueError("minimum must be at least 1")
    shown_m, shown_ids = _comparisons(shown_matches, shown_items)
    blind_m, blind_ids = _comparisons(blind_matches, blind_items)
    shown = agreement_estimate(shown_m, shown_ids, level)
    blind = agreement_estimate(blind_m, blind_ids, level)
    more_needed = {"shown": max(0, minimum - shown.n), "blind": max(0, minimum - blind.n)}

    def result(value: float | None, ci: tuple[float, float] | None, hint: str | None) -> AnchoringGap:
        return AnchoringGap(
            value=value,
            n=shown.n + blind.n,
            ci=ci,
            shown=shown,
            blind=blind,
            minimum=minimum,
            more_needed=more_needed,
            hint=hint,
        )

    if more_needed["shown"] or more_needed["blind"]:
        missing = [f"{count} more {side}" for side, count in more_needed.items() if count]
        return result(None, None, f"needs at least {minimum} comparisons on each side: {' and '.join(missing)}")
    value = float(shown_m.mean() - blind_m.mean())
    items, inverse = np.unique(np.concatenate([shown_ids, blind_ids]), return_inverse=True)
    inverse = inverse.ravel()
    shown_index, blind_index = inverse[: shown_ids.size], inverse[shown_ids.size :]
    n_items = items.size
    ci = cluster_difference_interval(
        (
            np.bincount(shown_index, weights=shown_m, minlength=n_items),
            np.bincount(shown_index, minlength=n_items),
        ),
        (
            np.bincount(blind_index, weights=blind_m, minlength=n_items),
            np.bincount(blind_index, minlength=n_items),
        ),
        level,
    )
    return result(value, ci, None)


@dataclass(frozen=True)
class HandoffDecision:
    """Whether the remaining items may go to the LLM, and why (for the dashboard and the audit trail).

    ``rule`` is the rule that was applied; ``reason`` explains the outcome in words; the figures used are kept.
    """

    eligible: bool
    rule: HandoffRule
    reason: str
    blind: Estimate
    threshold: float
    minimum: int
    more_needed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "eligible": self.eligible,
            "rule": self.rule,
            "reason": self.reason,
            "blind": self.blind.as_dict(),
            "threshold": self.threshold,
            "minimum": self.minimum,
            "more_needed": self.more_needed,
        }


def handoff_decision(
    blind: Estimate, threshold: float = 0.9, minimum: int = 20, rule: HandoffRule = "point"
) -> HandoffDecision:
    """Handoff when blind comparisons ≥ ``minimum`` and blind agreement ≥ ``threshold``.

    ``rule="point"`` compares the point estimate with the threshold; ``rule="lower_bound"`` (stricter) requires
    the lower end of the interval to reach it, i.e. agreement at least ``threshold`` with the interval's
    confidence rather than on average. ``blind`` must carry the interval over items (:func:`agreement_estimate`
    with ``items``): a label-level interval is too narrow and would hand off on weaker evidence than it states.
    """
    if rule not in ("point", "lower_bound"):
        raise ValueError(f"unknown rule {rule!r}")
    more_needed = max(0, minimum - blind.n)

    def decide(eligible: bool, reason: str) -> HandoffDecision:
        return HandoffDecision(eligible, rule, reason, blind, threshold, minimum, more_needed)

    if more_needed:
        return decide(False, f"{blind.n} blind comparisons of the {minimum} required: {more_needed} more needed")
    if blind.value is None:
        return decide(False, f"blind agreement is not reported yet ({blind.n} comparisons)")
    if rule == "point":
        if blind.value >= threshold:
            return decide(True, f"blind agreement {blind.value:.3f} reaches the threshold {threshold:.3f}")
        return decide(False, f"blind agreement {blind.value:.3f} is below the threshold {threshold:.3f}")
    if blind.ci is None:
        return decide(False, "blind agreement has no interval, so its lower bound cannot be checked")
    low = blind.ci[0]
    if low >= threshold:
        return decide(True, f"lower bound {low:.3f} of blind agreement reaches the threshold {threshold:.3f}")
    return decide(
        False,
        f"lower bound {low:.3f} of blind agreement ({blind.value:.3f}) is below the threshold {threshold:.3f}",
    )
