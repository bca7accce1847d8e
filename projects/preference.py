"""Which response a judgment prefers: the one rule, for every place that asks.

A judgment is a binary choice (a stored position, or TIE), a side-by-side Likert point (1 = the response at stored
position 0 strongly preferred, ``points`` = position 1, the odd scale's middle = no preference) or slider values
(μ, ν) per response and criterion. The save path, the resolution step, the selectors, the suggestion handoff and
the aggregation's signed preference all read a judgment through these functions, so they cannot disagree on a
Likert centre or a tie at the boundary. Pure: no Django, so the maths and notebooks can use it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

TIE = -1
PERMILLE = 1000
#: Likert scales have an odd number of points, 3 to 11, so the middle point means "no preference". The database
#: holds the same rule (CHECK project_likert_points_odd_range).
LIKERT_POINTS = tuple(range(3, 12, 2))
#: Score gaps within this of the tie tolerance count as reaching it: per-mille inputs make exact boundaries common
#: (0.3 − 0.2 is 0.09999999999999998). The same slack as aggregation.maths.ifs.TOLERANCE_SLACK.
TOLERANCE_SLACK = 1e-9


def likert_points_check(points: int) -> int:
    """``points`` if it is a valid scale length, else ValueError naming the rule."""
    if int(points) not in LIKERT_POINTS:
        raise ValueError(f"A Likert scale has an odd number of points from 3 to 11 (so it has a middle), not {points}.")
    return int(points)


def likert_centre(points: int) -> int:
    return (likert_points_check(points) + 1) // 2


def likert_signed(value: ArrayLike, points: int) -> NDArray[np.float64]:
    """Likert point(s) → signed preference s = (centre − c)/half-range ∈ [−1, 1]; +1 = position 0 preferred."""
    centre = likert_centre(points)
    return np.asarray((centre - np.asarray(value, dtype=np.float64)) / (centre - 1), dtype=np.float64)


def binary_signed(choice: ArrayLike) -> NDArray[np.float64]:
    """Binary choice(s) → s: position 0 → +1, position 1 → −1, TIE → 0."""
    c = np.asarray(choice, dtype=np.float64)
    return np.asarray(np.where(c == 0, 1.0, np.where(c == 1, -1.0, 0.0)), dtype=np.float64)


def ifs_scores(values: Iterable[tuple[int, float, int, int]]) -> dict[int, float]:
    """Criterion-weighted scores S = Σ_c w_c (μ − ν) per stored position, weights rescaled to sum 1, from
    (position, criterion weight, μ‰, ν‰) rows: S of the criteria-combined value
    (aggregation.maths.ifs.combine_criteria)."""
    rows = list(values)
    by_position: dict[int, list[tuple[float, int]]] = {}
    for position, weight, mu, nu in rows:
        by_position.setdefault(int(position), []).append((float(weight), int(mu) - int(nu)))
    scores: dict[int, float] = {}
    for position, pairs in by_position.items():
        total = sum(weight for weight, _ in pairs)
        if total <= 0:
            # All criteria weigh nothing: equal weights, as the aggregation does.
            pairs = [(1.0, difference) for _, difference in pairs]
            total = float(len(pairs))
        scores[position] = sum(weight * difference for weight, difference in pairs) / total / PERMILLE
    return scores


def preferred_from_scores(scores: Mapping[int, float], tolerance: float) -> int:
    """Stored position with the highest score; TIE when the best two differ by less than ``tolerance`` (an exact
    tie, within rounding, always counts; gaps within TOLERANCE_SLACK of it count as reaching it), as
    aggregation.maths.ifs.preferred_response reads them."""
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return TIE
    if len(ranked) > 1:
        gap = ranked[0][1] - ranked[1][1]
        if gap <= TOLERANCE_SLACK or gap < tolerance - TOLERANCE_SLACK:
            return TIE
    return ranked[0][0]


def preferred_position(
    *,
    mode: str,
    choice: int | None = None,
    likert_value: int | None = None,
    likert_points: int = 7,
    values: Iterable[tuple[int, float, int, int]] = (),
    tie_tolerance: float = 0.1,
) -> int:
    """The stored position a judgment prefers, TIE for none.

    ``mode`` is the project's mode: ``binary`` reads ``choice``; ``likert`` the side of ``likert_value``;
    ``ifs`` the criterion-weighted scores of ``values`` (position, criterion weight, μ‰, ν‰) within the tie
    tolerance. A missing answer prefers nothing.
    """
    if mode == "binary":
        return TIE if choice is None else int(choice)
    if mode == "likert":
        if likert_value is None or not 1 <= likert_value <= likert_points_check(likert_points):
            return TIE
        s = float(likert_signed(likert_value, likert_points))
        return 0 if s > 0 else 1 if s < 0 else TIE
    return preferred_from_scores(ifs_scores(values), tie_tolerance)


def position_of_signed(s: float) -> int:
    """The position a signed preference points to (two responses): +1 side → 0, −1 side → 1, 0 → TIE."""
    return 0 if s > 0 else 1 if s < 0 else TIE


__all__: list[Any] = [
    "LIKERT_POINTS",
    "TIE",
    "binary_signed",
    "ifs_scores",
    "likert_centre",
    "likert_points_check",
    "likert_signed",
    "position_of_signed",
    "preferred_from_scores",
    "preferred_position",
]
