"""Adaptive overlap: which items get one more annotator. Pure numpy, no Django.

The paper's future work asks for more annotators where the aggregate is uncertain. Two kinds of uncertainty call
for more labels, and they look different in IFS data:

* **hesitant**: the annotators themselves were unsure, the aggregate's mean hesitation π is high
  (π ≥ ``hesitation_threshold``). Another judgment narrows a preference nobody was sure of.
* **disputed**: the annotators were confident (π below the threshold) but disagreed, the item's agreement is low
  (agreement < ``dispute_threshold``). Another judgment breaks the tie between confident camps.

An item qualifies only with at least ``minimum_annotators`` labels (an aggregate of one label says nothing about
dispute) and while its extra labels are below the per-item ``cap``. Each round gives one extra label to each
qualifying item, most uncertain first (urgency: π for hesitant items, 1 − agreement for disputed ones, so the two
scales meet at their thresholds' complements), until the project's remaining ``budget`` is spent. Rounds repeat as
labels arrive: an item the new label settled drops out, one still uncertain gets another, up to the cap. Giving
one label per round rather than the whole cap at once is what keeps the budget for the items that stay uncertain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

HESITANT = 1
DISPUTED = 2
#: A tied preference, as the project stores it (projects.models.TIE).
TIE = -1
REASONS = {HESITANT: "hesitant", DISPUTED: "disputed"}

#: Defaults: hesitation at or above 0.4 (sliders that leave 40 % undecided), agreement below 0.6 (about the
#: corrected Eq. 11's value for two confident opposite judgments among three), one to three extra labels.
DEFAULT_HESITATION_THRESHOLD = 0.4
DEFAULT_DISPUTE_THRESHOLD = 0.6
DEFAULT_MINIMUM_ANNOTATORS = 2

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]


@dataclass(frozen=True)
class Allocation:
    """One round: ``extra[i]`` new labels wanted for item i (0 or 1), ``reason[i]`` (0 none, HESITANT, DISPUTED)
    for every qualifying item (also those the budget left out), ``urgency[i]`` the ranking key."""

    extra: IntArray
    reason: IntArray
    urgency: FloatArray

    @property
    def spent(self) -> int:
        return int(self.extra.sum())


def classify(
    hesitation: ArrayLike,
    agreement: ArrayLike,
    *,
    hesitation_threshold: float = DEFAULT_HESITATION_THRESHOLD,
    dispute_threshold: float = DEFAULT_DISPUTE_THRESHOLD,
) -> tuple[IntArray, FloatArray]:
    """(reason, urgency) per item: HESITANT when π ≥ threshold, else DISPUTED when agreement < threshold, else 0.
    NaN hesitation (binary and Likert modes carry none) counts as confident; NaN agreement as undisputed."""
    pi = np.asarray(hesitation, dtype=np.float64)
    agree = np.asarray(agreement, dtype=np.float64)
    if pi.shape != agree.shape:
        raise ValueError("hesitation and agreement need one entry per item")
    hesitant = np.nan_to_num(pi, nan=0.0) >= hesitation_threshold
    disputed = ~hesitant & (np.nan_to_num(agree, nan=1.0) < dispute_threshold)
    reason = np.where(hesitant, HESITANT, np.where(disputed, DISPUTED, 0)).astype(np.int64)
    urgency = np.where(hesitant, np.nan_to_num(pi), np.where(disputed, 1.0 - np.nan_to_num(agree, nan=1.0), 0.0))
    return reason, urgency.astype(np.float64)


def allocate(
    hesitation: ArrayLike,
    agreement: ArrayLike,
    n_annotators: ArrayLike,
    extra_given: ArrayLike,
    *,
    cap: int,
    budget: int,
    hesitation_threshold: float = DEFAULT_HESITATION_THRESHOLD,
    dispute_threshold: float = DEFAULT_DISPUTE_THRESHOLD,
    minimum_annotators: int = DEFAULT_MINIMUM_ANNOTATORS,
    margin: ArrayLike | None = None,
    batch: int | None = None,
) -> Allocation:
    """One round of the rule in the module docstring. ``extra_given``: extra labels each item already had (or has
    open); ``budget``: extra labels the project may still spend. Deterministic: ties in urgency go to the lower
    index."""
    if cap < 0 or budget < 0:
        raise ValueError("cap and budget must be non-negative")
    reason, urgency = classify(
        hesitation, agreement, hesitation_threshold=hesitation_threshold, dispute_threshold=dispute_threshold
    )
    labels = np.asarray(n_annotators, dtype=np.int64)
    given = np.asarray(extra_given, dtype=np.int64)
    if labels.shape != reason.shape or given.shape != reason.shape:
        raise ValueError("every argument needs one entry per item")
    if margin is not None:
        # Among uncertain items, those nearest to a tie first: there one more label is likeliest to change the
        # preference; a hesitant item already far from a tie keeps its preference whatever comes.
        closeness = 1.0 - np.minimum(np.abs(np.nan_to_num(np.asarray(margin, dtype=np.float64), nan=0.0)), 1.0)
        urgency = urgency * closeness
    qualifies = (reason > 0) & (labels >= minimum_annotators) & (given < cap)
    reason = np.where(qualifies, reason, 0)
    extra = np.zeros(reason.shape, dtype=np.int64)
    candidates = np.flatnonzero(qualifies)
    if candidates.size and budget:
        # Most urgent first; a stable sort keeps the lower index first among equals.
        ranked = candidates[np.argsort(-urgency[candidates], kind="stable")]
        extra[ranked[: budget if batch is None else min(budget, batch)]] = 1
    return Allocation(extra=extra, reason=reason.astype(np.int64), urgency=np.where(qualifies, urgency, 0.0))


def changes(
    before_preferred: ArrayLike, after_preferred: ArrayLike, before_margin: ArrayLike, after_margin: ArrayLike
) -> dict[str, int]:
    """What extra labels did to the aggregates of the items that got them. Preferences are positions, ``TIE``
    (−1) for a tie; margins are S_best − S_worst.

    * ``flipped``: one response was preferred before and another after;
    * ``firmed``: a tie became a preference, or the same preference with a larger margin;
    * ``weakened``: a preference became a tie, or the same preference with a smaller margin;
    * ``unchanged``: the rest. Items without a before or an after preference (NaN) are left out.
    """
    b = np.asarray(before_preferred, dtype=np.float64)
    a = np.asarray(after_preferred, dtype=np.float64)
    bm = np.abs(np.asarray(before_margin, dtype=np.float64))
    am = np.abs(np.asarray(after_margin, dtype=np.float64))
    known = ~np.isnan(b) & ~np.isnan(a)
    b_tie, a_tie = b == TIE, a == TIE
    flipped = known & ~b_tie & ~a_tie & (a != b)
    same = known & (a == b)
    margins = same & ~np.isnan(bm) & ~np.isnan(am)
    firmed = (known & b_tie & ~a_tie) | (margins & (am > bm + 1e-9))
    weakened = (known & ~b_tie & a_tie) | (margins & (am < bm - 1e-9))
    return {
        "flipped": int(flipped.sum()),
        "firmed": int(firmed.sum()),
        "weakened": int(weakened.sum()),
        "unchanged": int((known & ~flipped & ~firmed & ~weakened).sum()),
    }
