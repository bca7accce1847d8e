"""Position bias: how often a judgment prefers the response that was shown first. Pure numpy, no Django.

Every annotator sees an item's responses in an order drawn for them (seeded, stored with the annotation), so the
response on the left is a fair coin flip between the candidates. Whatever the items are, an annotator who judges
content alone prefers the first-shown response half the time among their non-tied pairwise judgments: the rate of
"first preferred" is 0.5 under the null of no bias, and each judgment is an independent Bernoulli(0.5) trial because
the orders are independent draws. That is what makes a plain Wilson interval valid per annotator.

* **Per annotator**: first-preferred / decided judgments (ties carry no direction and are left out) with a Wilson
  score interval; **flagged** when the interval excludes 0.5 and there are at least ``minimum`` decided judgments.
* **Per project**: the same ratio over every decided judgment, with annotators as clusters (one biased person moves
  all of their own labels together), by :func:`aggregation.maths.intervals.cluster_proportion_interval`.

With more than two responses the judgment's preferred response is compared with the one shown first; the null rate
is then 1/n for n responses, so only two-response judgments enter (the usual side-by-side case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.comparisons import wilson_interval
from aggregation.maths.intervals import cluster_proportion_interval

#: Fewer decided judgments than this and an annotator is never flagged (the interval is shown all the same).
MINIMUM_JUDGMENTS = 10
NULL_RATE = 0.5


@dataclass(frozen=True)
class PositionBias:
    """Rates per annotator (index order of the input) and for the project, with 95 % intervals and flags."""

    first_preferred: np.ndarray[Any, np.dtype[np.int64]]
    decided: np.ndarray[Any, np.dtype[np.int64]]
    rate: np.ndarray[Any, np.dtype[np.float64]]
    low: np.ndarray[Any, np.dtype[np.float64]]
    high: np.ndarray[Any, np.dtype[np.float64]]
    flagged: np.ndarray[Any, np.dtype[np.bool_]]
    project_rate: float | None
    project_ci: tuple[float, float] | None
    project_flagged: bool

    def as_dict(self, annotator_ids: ArrayLike) -> dict[str, Any]:
        ids = np.asarray(annotator_ids)

        def clean(x: float) -> float | None:
            return None if not np.isfinite(x) else round(float(x), 4)

        n = int(self.decided.sum())
        reason = headline_needs(n)
        return {
            # The project's rate is withheld below the minimum: from 2 judgments it reads 1.000 and means nothing.
            "rate": None if self.project_rate is None or reason else round(self.project_rate, 4),
            "ci": None if self.project_ci is None or reason else [round(v, 4) for v in self.project_ci],
            "reason": reason,
            "n": n,
            "flagged": self.project_flagged,
            "minimum": MINIMUM_JUDGMENTS,
            "annotators": [
                {
                    "annotator_id": int(ids[a]),
                    "rate": clean(self.rate[a]),
                    "ci": None if not np.isfinite(self.low[a]) else [clean(self.low[a]), clean(self.high[a])],
                    "n": int(self.decided[a]),
                    "flagged": bool(self.flagged[a]),
                }
                for a in range(self.decided.size)
            ],
        }


def headline_needs(n: int, minimum: int = MINIMUM_JUDGMENTS) -> str | None:
    """None when the project's position-bias rate may be shown on ``n`` decided judgments; else what it needs."""
    if n >= minimum:
        return None
    return f"needs {minimum} decided judgments ({n} so far)"


def first_preferred(preferred: ArrayLike, shown_first: ArrayLike) -> np.ndarray[Any, np.dtype[np.float64]]:
    """1.0 where the preferred response is the one shown first, 0.0 where it is another, NaN for a tie (< 0)."""
    chosen = np.asarray(preferred, dtype=np.int64)
    first = np.asarray(shown_first, dtype=np.int64)
    out = (chosen == first).astype(np.float64)
    out[chosen < 0] = np.nan
    return out


def position_bias(
    outcome: ArrayLike, annotator: ArrayLike, n_annotators: int, *, minimum: int = MINIMUM_JUDGMENTS
) -> PositionBias:
    """Rates of preferring the first-shown response from ``outcome`` (1 first, 0 other, NaN tie) per judgment and
    the ``annotator`` index (0..n_annotators−1) of each judgment."""
    values = np.asarray(outcome, dtype=np.float64).ravel()
    who = np.asarray(annotator, dtype=np.int64).ravel()
    if values.shape != who.shape:
        raise ValueError("outcome and annotator need one entry per judgment")
    decided_mask = ~np.isnan(values)
    who, values = who[decided_mask], values[decided_mask]
    firsts = np.bincount(who, weights=values, minlength=n_annotators).round().astype(np.int64)
    decided = np.bincount(who, minlength=n_annotators).astype(np.int64)
    rate = np.full(n_annotators, np.nan)
    low = np.full(n_annotators, np.nan)
    high = np.full(n_annotators, np.nan)
    flagged = np.zeros(n_annotators, dtype=bool)
    for a in np.flatnonzero(decided):
        rate[a] = firsts[a] / decided[a]
        interval = wilson_interval(int(firsts[a]), int(decided[a]))
        assert interval is not None  # decided[a] > 0
        low[a], high[a] = interval
        flagged[a] = decided[a] >= minimum and (high[a] < NULL_RATE or low[a] > NULL_RATE)
    total = int(decided.sum())
    project_rate = firsts.sum() / total if total else None
    project_ci = cluster_proportion_interval(firsts, decided) if total else None
    project_flagged = (
        project_ci is not None and total >= minimum and (project_ci[1] < NULL_RATE or project_ci[0] > NULL_RATE)
    )
    return PositionBias(
        first_preferred=firsts,
        decided=decided,
        rate=rate,
        low=low,
        high=high,
        flagged=flagged,
        project_rate=None if project_rate is None else float(project_rate),
        project_ci=project_ci,
        project_flagged=bool(project_flagged),
    )
