"""The signed preference s ∈ [−1, 1] (+1 = response 0 preferred) of a binary choice, a Likert point or IFS values,
and its sign with a tie band: the common scale of the cross-mode agreement figures. Pure numpy;
:mod:`aggregation.maths.agreement` re-exports these names. Likert scales are odd (projects.preference holds the rule
for the app; this maths module accepts any scale of at least two points, for notebooks)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.ifs import TOLERANCE_SLACK, FloatArray, combine_criterion_values, score

#: Signed preferences whose magnitude is below this are read as "no preference" by :func:`preference_sign`. For IFS
#: s = (S_0 − S_1)/2, so the project's score tolerance τ (default 0.1) corresponds to a band of τ/2.
DEFAULT_TIE_BAND = 0.05


def signed_preference_binary(choice: ArrayLike, mask: ArrayLike | None = None) -> FloatArray:
    """Binary choice → s: response index 0 → +1, 1 → −1, tie (−1) → 0. Absent entries (mask False) give NaN."""
    c = np.asarray(choice)
    present = np.ones(c.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    c_float = c.astype(np.float64)
    known = (c_float == 0) | (c_float == 1) | (c_float == -1)
    if np.any(present & ~known):
        raise ValueError("binary choices must be 0, 1 (preferred response) or -1 (tie)")
    s = np.where(c_float == 0, 1.0, np.where(c_float == 1, -1.0, 0.0))
    return np.where(present, s, np.nan)


def signed_preference_likert(value: ArrayLike, points: int, mask: ArrayLike | None = None) -> FloatArray:
    """Side-by-side Likert value c ∈ {1, …, points} → s = (centre − c)/half-range.

    Point 1 means "strongly prefers response 0" (s = +1), point ``points`` "strongly prefers response 1"
    (s = −1); an odd scale's centre is "no preference" (s = 0). A scale stored the other way round must be flipped
    (c → points + 1 − c) before calling. Absent entries give NaN.
    """
    if points < 2:
        raise ValueError("a Likert scale needs at least two points")
    c = np.asarray(value, dtype=np.float64)
    present = np.ones(c.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if np.any(present & ~((c >= 1) & (c <= points))):
        raise ValueError(f"Likert values must lie in 1..{points}")
    centre = (points + 1) / 2.0
    half_range = (points - 1) / 2.0
    return np.where(present, (centre - c) / half_range, np.nan)


def signed_preference_ifs(
    mu: ArrayLike,
    nu: ArrayLike,
    criterion_weights: ArrayLike | None = None,
    mask: ArrayLike | None = None,
) -> FloatArray:
    """IFS judgments → s = (S_0 − S_1)/2, S = criterion-weighted μ − ν, shape (items, annotators).

    Input shape (items, 2, annotators) or (items, 2, criteria, annotators). An annotator's s is NaN on an item
    unless every value of theirs for the item is present (mask). For n > 2 responses use :func:`ifs.all_pairs`.
    """
    scores = score(mu, nu)
    if scores.ndim not in (3, 4) or scores.shape[1] != 2:
        raise ValueError("expected shape (items, 2, annotators) or (items, 2, criteria, annotators)")
    if mask is not None:
        # NaN propagates through the criteria sum, so a partly judged item gives no preference at all.
        scores = np.where(np.asarray(mask, dtype=bool), scores, np.nan)
    if scores.ndim == 4:
        # S is linear in (μ, ν): the score of the criteria-combined value is the combined score.
        scores = combine_criterion_values(scores, criterion_weights, axis=2)
    elif criterion_weights is not None:
        raise ValueError("criterion_weights given but the values have no criteria axis")
    return np.asarray(0.5 * (scores[:, 0] - scores[:, 1]), dtype=np.float64)


def preference_sign(signed: ArrayLike, tie_band: float = DEFAULT_TIE_BAND) -> FloatArray:
    """s → −1, 0 (|s| < tie_band), +1; NaN stays NaN. The nominal categories of the cross-mode comparison.

    As in :func:`ifs.preferred_response` (whose gap is 2|s|), a magnitude within rounding of the band counts as
    reaching it, so IFS signs agree with preferred responses read with tolerance 2 × ``tie_band``.
    """
    s = np.asarray(signed, dtype=np.float64)
    return np.where(np.isnan(s), np.nan, np.where(np.abs(s) < tie_band - TOLERANCE_SLACK / 2, 0.0, np.sign(s)))
