"""Calibration per confidence bin, the lowest certifiable confidence (tested from the top down), certification by
the lower bound, the audit's verdicts and the verification rates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import accuracy, certification


def _estimate(value: float, ci: tuple[float, float], items: int = 100) -> accuracy.DesignEstimate:
    return accuracy.DesignEstimate(value, ci, items, items, float(items), 0.01, "hajek")


def test_certification_needs_the_lower_bound_and_enough_items() -> None:
    assert certification.certification_decision(_estimate(0.95, (0.91, 0.98)), threshold=0.9).certified
    below = certification.certification_decision(_estimate(0.95, (0.89, 0.98)), threshold=0.9)
    assert not below.certified
    assert "below" in below.reason
    few = certification.certification_decision(_estimate(1.0, (0.95, 1.0), items=10), threshold=0.9, minimum=30)
    assert not few.certified
    assert few.more_needed == 20
    none = accuracy.DesignEstimate(None, None, 0, 0, 0.0, None, "hajek")
    assert not certification.certification_decision(none, threshold=0.9).certified


def test_calibration_curve_estimates_each_bin_on_its_own_items() -> None:
    confidence = np.array([0.55, 0.58, 0.75, 0.78, 0.95, 1.0])
    values = np.array([0.0, 1.0, 1.0, 1.0, 1.0, np.nan])
    bins = certification.calibration_curve(values, np.full(6, 0.2), confidence, [0.5, 0.7, 0.9, 1.0])
    assert [(b.low, b.high) for b in bins] == [(0.5, 0.7), (0.7, 0.9), (0.9, 1.0)]
    assert [b.estimate.value for b in bins] == [0.5, 1.0, 1.0]
    assert [b.estimate.items for b in bins] == [2, 2, 1]


def test_the_cut_is_tested_from_the_top_and_stops_at_the_first_failure() -> None:
    rng = np.random.default_rng(0)
    n = 600
    confidence = rng.uniform(0.5, 1.0, n)
    edges = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    # Right everywhere except the 0.7-0.8 bin: a cut at 0.6 would pass on average, but 0.7 fails first.
    values = np.where((confidence >= 0.7) & (confidence < 0.8), 0.0, 1.0)
    out = certification.lowest_certifiable_confidence(
        values, np.full(n, 0.1), confidence, edges, threshold=0.8, minimum=30
    )
    assert out.cut == 0.8
    assert [edge for edge, _ in out.tested] == [0.9, 0.8, 0.7]
    assert not out.tested[-1][1].certified
    none = certification.lowest_certifiable_confidence(np.zeros(n), np.full(n, 0.1), confidence, edges, threshold=0.8)
    assert none.cut is None
    assert len(none.tested) == 1


def test_audit_collects_then_passes_or_suspends() -> None:
    p = np.full(200, 0.05)
    good = np.ones(200)
    good[::20] = 0.0  # 95 % right
    assert certification.audit_check(good[:20], p[:20], threshold=0.8, minimum=30).state == "collecting"
    passing = certification.audit_check(good, p, threshold=0.8, minimum=30)
    assert passing.state == "passing"
    assert passing.evidence < 20
    dropped = good.copy()
    dropped[150:] = np.where(np.arange(50) % 2 == 0, 0.0, 1.0)  # the last 50 right half the time
    suspended = certification.audit_check(dropped, p, threshold=0.75, minimum=30, window=60)
    assert suspended.state == "suspend"
    assert "suspended" in suspended.reason
    assert suspended.suspended_at is not None
    assert 150 < suspended.suspended_at <= 200
    assert suspended.evidence >= 20
    # The dashboard's estimate is the last ``window`` answers.
    assert suspended.estimate.items == 60
    # Unanswered audit items (NaN) are waited for, not counted as wrong.
    pending = np.concatenate([good[:40], np.full(30, np.nan)])
    assert certification.audit_check(pending, p[:70], threshold=0.8, minimum=30).estimate.items == 40


def test_the_audit_stakes_nothing_while_answers_stay_above_the_threshold() -> None:
    wealth = certification.audit_wealth(np.ones(50), threshold=0.8)
    np.testing.assert_array_equal(wealth, np.ones(50))


@settings(max_examples=60, deadline=None)
@given(
    answers=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=80),
    threshold=st.floats(0.05, 1.0),
    cut=st.integers(0, 80),
)
def test_the_audit_wealth_is_positive_and_never_rewritten_by_later_answers(
    answers: list[float], threshold: float, cut: int
) -> None:
    y = np.asarray(answers)
    wealth = certification.audit_wealth(y, threshold=threshold)
    assert np.all(wealth > 0.0)
    np.testing.assert_allclose(certification.audit_wealth(y[:cut], threshold=threshold), wealth[:cut])


def test_a_look_at_every_answer_gives_the_same_verdict_as_one_look_at_the_end() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(300) < np.where(np.arange(300) < 150, 0.95, 0.55)).astype(float)
    p = np.full(300, 0.05)
    states = [certification.audit_check(y[:j], p[:j], threshold=0.75, minimum=30).state for j in range(30, 301)]
    first = states.index("suspend")
    # Once suspended, always suspended: the verdict is the running maximum of the wealth.
    assert set(states[first:]) == {"suspend"}
    end = certification.audit_check(y, p, threshold=0.75, minimum=30)
    assert end.suspended_at == max(30 + first, 30)


def test_verification_rates_mirror_each_other_with_intervals_over_items() -> None:
    kept = np.array([1, 1, 1, 0, 1, 1, 0, 1, 1, 1])
    items = np.array([0, 0, 1, 1, 2, 3, 4, 5, 6, 7])
    rates = certification.verification_rates(kept, items)
    assert rates.keep == pytest.approx(0.8)
    assert rates.change == pytest.approx(0.2)
    assert rates.keep_ci is not None
    assert rates.change_ci is not None
    assert rates.change_ci == pytest.approx((1 - rates.keep_ci[1], 1 - rates.keep_ci[0]))
    assert rates.answers == 10
    assert rates.items == 8
    assert certification.verification_rates([], []).keep is None
