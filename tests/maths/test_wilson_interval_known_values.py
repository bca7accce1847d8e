"""Wilson score intervals against known values, and the agreement estimate built on them."""

from __future__ import annotations

import pytest

from aggregation.maths import comparisons


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),  # upper end z²/(n + z²)
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 2, 0.0945, 0.9055),
    ],
)
def test_known_95_percent_intervals(successes: int, n: int, low: float, high: float) -> None:
    interval = comparisons.wilson_interval(successes, n)
    assert interval == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))


def test_a_wider_level_gives_a_wider_interval() -> None:
    narrow = comparisons.wilson_interval(8, 10, level=0.8)
    wide = comparisons.wilson_interval(8, 10, level=0.99)
    assert narrow is not None
    assert wide is not None
    assert wide[0] < narrow[0]
    assert narrow[1] < wide[1]


def test_no_comparisons_no_interval() -> None:
    assert comparisons.wilson_interval(0, 0) is None
    estimate = comparisons.agreement_estimate([])
    assert estimate.as_dict() == {"value": None, "n": 0, "ci": None}


def test_agreement_estimate() -> None:
    estimate = comparisons.agreement_estimate([True] * 8 + [False] * 2)
    assert estimate.value == pytest.approx(0.8)
    assert estimate.n == 10
    assert estimate.ci == (pytest.approx(0.4902, abs=1e-4), pytest.approx(0.9433, abs=1e-4))


def test_impossible_counts_are_rejected() -> None:
    with pytest.raises(ValueError, match="successes"):
        comparisons.wilson_interval(11, 10)
