"""Simulated annotators (tests/maths/study_simulations.py): one who prefers the first-shown response is flagged,
an unbiased one is flagged no more often than the interval's 5 % miss rate allows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths.position_bias import MINIMUM_JUDGMENTS, first_preferred, position_bias
from tests.maths.study_simulations import flag_rates

RUNS = 200


def test_unbiased_annotators_are_rarely_flagged():
    rates = flag_rates(biases=(0.0,), runs=RUNS, n=150, seed=11)
    # Nominal 5 %; 200 runs put the binomial sd at 1.5 points, so 10 % is a real failure, not noise.
    assert rates[0.0] <= 0.10


def test_a_strong_first_position_habit_is_flagged():
    rates = flag_rates(biases=(0.3, 0.5), runs=RUNS, n=150, seed=12)
    assert rates[0.3] >= 0.85
    assert rates[0.5] >= 0.99


def test_power_grows_with_bias():
    rates = flag_rates(biases=(0.0, 0.1, 0.2, 0.4), runs=RUNS, n=150, seed=13)
    assert rates[0.0] < rates[0.1] < rates[0.2] < rates[0.4]


@settings(max_examples=60, deadline=None)
@given(
    firsts=st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=1, max_size=80),
    annotators=st.integers(min_value=1, max_value=4),
)
def test_rates_and_intervals_are_consistent(firsts, annotators):
    outcome = np.array(firsts)
    who = np.arange(outcome.size) % annotators
    result = position_bias(outcome, who, annotators)
    for a in range(annotators):
        mine = outcome[(who == a) & ~np.isnan(outcome)]
        assert result.decided[a] == mine.size
        if mine.size == 0:
            assert np.isnan(result.rate[a])
            assert not result.flagged[a]
            continue
        assert result.rate[a] == mine.mean()
        assert result.low[a] - 1e-12 <= result.rate[a] <= result.high[a] + 1e-12  # Wilson at 0/n rounds to 3e-17
        excludes = result.high[a] < 0.5 or result.low[a] > 0.5
        assert result.flagged[a] == (excludes and mine.size >= MINIMUM_JUDGMENTS)
    assert result.decided.sum() == np.count_nonzero(~np.isnan(outcome))


def test_ties_are_left_out_and_the_first_shown_is_compared():
    outcome = first_preferred([0, 1, -1, 1], [0, 0, 1, 1])
    assert outcome[:2].tolist() == [1.0, 0.0]
    assert np.isnan(outcome[2])
    assert outcome[3] == 1.0
