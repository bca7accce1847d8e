"""Budget first: what a budget of blind human labels buys, and the labels an error target needs. Pure numpy, no
Django.

The selective-risk contract (:mod:`aggregation.maths.selective_risk`) certifies the model's labels above a
confidence threshold from a uniform blind sample. Before drawing it, a lead asks the other way round: with B labels
(or an amount of money at a reward per label), which share of the items could be certified at each error target α,
and for a target, how many labels would it take?

**Forecast.** From the calibration sample, the model's estimated error per confidence bin e_k and the estimated
share of items in each bin s_k (Hájek, :mod:`aggregation.maths.accuracy`). The cell "confidence ≥ bin k's lower
edge" holds the share S_k = Σ_{j≥k} s_j with error r_k = Σ_{j≥k} s_j e_j / S_k. A uniform sample of n = B / m items
(m labels per item) puts about n·S_k of them in the cell; the cell passes when the Hoeffding-Bentkus p-value at its
error r_k and n·S_k items is at most δ, and the fixed sequence certifies cells from the top down until the first that
does not pass (skipping the top cells too small to pass even when flawless, as the contract does). The certifiable
share is the S_k of the last cell passed; the labels a target needs are the fewest B at which the widest cell whose
error is below α (and every cell above it) passes, found by bisection on the forecast itself.

It is a forecast, not a guarantee: it takes the estimated errors as true and the sample's error in each cell as
equal to it, which is its median outcome. tests/maths/contract_simulation.py checks that: at the forecast labels the
contract itself certifies the forecast cell in about half of simulated samples, and at a quarter of them seldom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.selective_risk import hoeffding_bentkus_p, items_to_pass

DEFAULT_TARGETS = (0.02, 0.05, 0.10, 0.20)


def _cells(share: ArrayLike, error: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(S_k, r_k) per cut from the top bin down; bins are given from the lowest confidence up."""
    s = np.asarray(share, dtype=np.float64).ravel()
    e = np.asarray(error, dtype=np.float64).ravel()
    if s.shape != e.shape or s.size == 0:
        raise ValueError("share and error need one entry per confidence bin")
    if np.any(s < 0) or np.any((e < 0) | (e > 1)):
        raise ValueError("shares must be non-negative and errors lie in [0, 1]")
    total = s.sum()
    if total <= 0:
        raise ValueError("the bins hold no items")
    s = s / total
    cum_s = np.cumsum(s[::-1])
    cum_err = np.cumsum((s * e)[::-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(cum_s > 0, cum_err / np.maximum(cum_s, 1e-300), 0.0)
    return cum_s, r


def certifiable_share(share: ArrayLike, error: ArrayLike, items: int, target: float, delta: float = 0.05) -> float:
    """The share of items a uniform sample of ``items`` would certify at ``target`` (module docstring)."""
    cum_s, r = _cells(share, error)
    start = 2 * items_to_pass(0.0, target, delta)
    passed, tested = 0.0, False
    for s_k, r_k in zip(cum_s, r, strict=True):
        n_k = math.floor(items * s_k)
        if n_k < start and not tested:
            continue
        tested = True
        if hoeffding_bentkus_p(r_k, n_k, target) > delta:
            break
        passed = float(s_k)
    return passed


def labels_needed(
    share: ArrayLike, error: ArrayLike, target: float, *, labels_per_item: float = 1.0, delta: float = 0.05
) -> tuple[float, int | None]:
    """(share, labels) for the widest cell certifiable at ``target``: the cells from the top down while their error
    stays below the target, and the fewest labels at which :func:`certifiable_share` reaches that cell (found by
    bisection from the cells' own needs, then checked). None labels when even the top bin's error is at or above
    the target."""
    cum_s, r = _cells(share, error)
    below = np.flatnonzero((r >= target) | (cum_s <= 0))
    last = (below[0] if below.size else cum_s.size) - 1
    if last < 0:
        return 0.0, None
    widest = float(cum_s[last])
    start = 2 * items_to_pass(0.0, target, delta)
    high = max(math.ceil(max(items_to_pass(float(r[k]), target, delta), start) / cum_s[k]) for k in range(last + 1))
    while certifiable_share(share, error, high, target, delta) < widest - 1e-12:
        high *= 2
    low = 1
    while low < high:
        mid = (low + high) // 2
        if certifiable_share(share, error, mid, target, delta) >= widest - 1e-12:
            high = mid
        else:
            low = mid + 1
    return widest, math.ceil(high * labels_per_item)


@dataclass(frozen=True)
class BudgetPlan:
    budget_labels: int
    labels_per_item: float
    rows: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": "budget_first",
            "verdict": "forecast",
            "reason": "",
            "sentence": (
                f"A forecast, not a guarantee: if the model's errors by confidence are what the calibration sample "
                f"shows, {self.budget_labels} blind labels ({self.labels_per_item:g} per item) would certify the "
                "shares below, and each target needs the labels beside it."
            ),
            "n": self.budget_labels,
            "labels_per_item": self.labels_per_item,
            "rows": self.rows,
        }


def budget_plan(
    share: ArrayLike,
    error: ArrayLike,
    *,
    budget_labels: int | None = None,
    money: float | None = None,
    reward_per_label: float | None = None,
    labels_per_item: float = 1.0,
    targets: tuple[float, ...] = DEFAULT_TARGETS,
    delta: float = 0.05,
) -> BudgetPlan:
    """Per target: the share a budget certifies and the labels the target needs. The budget is ``budget_labels``,
    or ``money`` at ``reward_per_label`` (whole labels only)."""
    if budget_labels is None:
        if money is None or reward_per_label is None or reward_per_label <= 0 or money < 0:
            raise ValueError("give budget_labels, or money and a positive reward_per_label")
        budget_labels = math.floor(money / reward_per_label + 1e-9)
    if budget_labels < 0 or labels_per_item < 1:
        raise ValueError("the budget must be non-negative and labels_per_item at least 1")
    items = int(budget_labels // labels_per_item)
    rows = []
    for target in targets:
        widest, needed = labels_needed(share, error, target, labels_per_item=labels_per_item, delta=delta)
        rows.append(
            {
                "target": target,
                "share_at_budget": certifiable_share(share, error, items, target, delta),
                "widest_share": widest,
                "labels_needed": needed,
            }
        )
    return BudgetPlan(budget_labels, labels_per_item, rows)


__all__ = ["DEFAULT_TARGETS", "BudgetPlan", "budget_plan", "certifiable_share", "labels_needed"]
