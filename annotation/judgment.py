"""Pure rules about a judgment: seeded orders, which response a judgment prefers, Accept defaults.

No database access here, so the services, the selectors and the tests share one definition of each rule.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from projects import preference

_SCALE = float(2**64)

# What Accept puts on the sliders when the suggestion carries no (μ, ν) of its own, in per-mille:
# the preferred response gets strong support, the other strong opposition; on a tie both get moderate
# support with some hesitation left, so the annotator sees that the LLM did not separate them.
ACCEPT_DEFAULT_PREFERRED = (800, 100)
ACCEPT_DEFAULT_OTHER = (100, 800)
ACCEPT_DEFAULT_TIE = (500, 300)


def _uniform(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / _SCALE


def queue_offset(*, seed: int, annotator_id: int) -> float:
    """Where this annotator starts on the project's queue-key circle: random per annotator, reproducible."""
    return _uniform(f"queue-offset:{seed}:{annotator_id}")


def request_turn(*, seed: int, annotator_id: int, item_id: int, share: float) -> bool:
    """Whether the save of ``item_id`` is followed by one of this annotator's open label requests: a seeded coin
    per (annotator, item), so requests come mixed among ordinary items at about ``share`` of them, reproducibly."""
    return _uniform(f"request-turn:{seed}:{annotator_id}:{item_id}") < share


def response_order_draw(*, seed: int, annotator_id: int, item_id: int, positions: Sequence[int]) -> list[int]:
    """The left-to-right order of stored positions one annotator sees for one item (seeded, so re-drawable)."""
    order = sorted(positions)
    random.Random(f"response-order:{seed}:{annotator_id}:{item_id}").shuffle(order)
    return order


def display_label(index: int) -> str:
    """A, B, C … for display column ``index``."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def preferred_from_scores(scores: Mapping[int, float], tolerance: float) -> int:
    """Stored position with the highest score, or TIE when the best two are closer than ``tolerance``."""
    return preference.preferred_from_scores(scores, tolerance)


def preferred_from_values(
    values: Sequence[Mapping[str, object]], criterion_weights: Mapping[str, float], tolerance: float
) -> int:
    """IFS: the response with the higher criterion-weighted score S = μ − ν (per-mille converted to [0, 1])."""
    rows = _value_rows(values, criterion_weights)
    return preference.preferred_position(mode="ifs", values=rows, tie_tolerance=tolerance)


def _value_rows(
    values: Sequence[Mapping[str, object]], criterion_weights: Mapping[str, float]
) -> list[tuple[int, float, int, int]]:
    return [
        (
            int(value["response"]),  # type: ignore[call-overload]
            criterion_weights.get(str(value["criterion"]), 0.0),
            int(value["mu"]),  # type: ignore[call-overload]
            int(value["nu"]),  # type: ignore[call-overload]
        )
        for value in values
    ]


def likert_centre(points: int) -> int:
    return preference.likert_centre(points)


def preferred_from_likert(value: int, points: int) -> int:
    """Likert is stored with 1 = the response at stored position 0 strongly preferred, ``points`` = position 1."""
    return preference.preferred_position(mode="likert", likert_value=value, likert_points=points)


def likert_for_preferred(preferred: int, points: int) -> int:
    """A clear but not extreme point for Accept: one step in from the end on the preferred side."""
    centre = likert_centre(points)
    step = max(1, centre - 2)
    if preferred == 0:
        return centre - step
    if preferred == 1:
        return centre + step
    return centre


def likert_display_to_stored(display_point: int, points: int, response_order: Sequence[int]) -> int:
    """The page draws 1 as "left strongly preferred"; storage uses 1 as "position 0 strongly preferred"."""
    if list(response_order[:2]) == [0, 1]:
        return display_point
    return points + 1 - display_point


# "Response 2", "responses 1 and 2", "Responses 1, 2 or 3": how the baseline and the LLM (whose prompt numbers the
# responses in stored order from 1) name responses in a rationale.
_RESPONSE_NAMES = re.compile(r"\b([Rr]esponses?)(\s+)(\d+(?:(?:\s*,\s*|\s+(?:and|or|vs\.?)\s+)\d+)*)\b")
_NUMBER = re.compile(r"\d+")


def rationale_for_viewer(text: str, labels: Mapping[int, str]) -> str:
    """The rationale with stored response numbers (1-based) renamed to this viewer's display labels.

    An annotator sees the responses as A, B … in their own shuffled order; a rationale that said "Response 1"
    beside "Response A" gave one response two names. Numbers that name no response are left as written.
    """

    def rename(match: re.Match[str]) -> str:
        def one(number: re.Match[str]) -> str:
            return labels.get(int(number.group()) - 1, number.group())

        return match.group(1) + match.group(2) + _NUMBER.sub(one, match.group(3))

    return _RESPONSE_NAMES.sub(rename, text)


def preferred_of_judgment(
    *,
    project: Any,
    criteria: Sequence[Any],
    cleaned: Mapping[tuple[int, str], tuple[int, int]],
    choice: int | None,
    point: int | None,
) -> int:
    """The stored position a judgment being saved prefers (TIE for none), as the saved annotation would be read:
    the binary choice, the Likert point's side, or the criterion-weighted IFS scores within the tie tolerance."""
    weights = {c.name: c.weight for c in criteria}
    return preference.preferred_position(
        mode=str(project.mode),
        choice=choice,
        likert_value=point,
        likert_points=project.likert_points,
        values=[(p, weights.get(n, 0.0), mu, nu) for (p, n), (mu, nu) in cleaned.items()],
        tie_tolerance=project.tie_tolerance,
    )
