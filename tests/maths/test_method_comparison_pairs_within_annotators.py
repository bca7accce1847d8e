"""The method study's maths: paired differences are within annotators (a per-person offset cancels, unlike a
difference of group means), the t interval is the textbook one, and fatigue slopes see a drift in time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths.method_comparison import Labels, mean_interval, method_figures, paired_differences


def _labels(rng: np.random.Generator, people: int, per_block: int, offsets: np.ndarray) -> Labels:
    rows = []
    for person in range(people):
        for block, method in enumerate((person % 2, 1 - person % 2)):
            for k in range(per_block):
                position = block * per_block + k
                seconds = 10.0 + offsets[person] + 2.0 * method + rng.normal(0, 1)
                rows.append((person * 100 + position, person, method, position, seconds, rng.choice([-1.0, 1.0])))
    item, annotator, method, position, seconds, signed = map(list, zip(*rows, strict=True))
    return Labels.from_lists(
        methods=["a", "b"],
        item=item,
        annotator=annotator,
        method=method,
        position=position,
        seconds=seconds,
        signed=signed,
        gold=[1.0] * len(item),
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), spread=st.floats(0, 1000))
def test_a_per_person_offset_cancels_in_the_paired_difference(seed, spread):
    base = _labels(np.random.default_rng(seed), 6, 5, np.zeros(6))
    shifted = _labels(np.random.default_rng(seed), 6, 5, np.random.default_rng(seed + 1).uniform(0, spread, 6))
    pick = next(r for r in paired_differences(base) if r["figure"] == "seconds_per_item")
    again = next(r for r in paired_differences(shifted) if r["figure"] == "seconds_per_item")
    assert again["value"] == pytest.approx(pick["value"], abs=1e-9 * max(1.0, spread))
    assert again["ci"] == pytest.approx(pick["ci"], abs=1e-9 * max(1.0, spread))


def test_mean_interval_is_the_student_t_interval():
    values = [1.0, 2.0, 4.0, 7.0]
    estimate = mean_interval(values)
    sd = float(np.std(values, ddof=1))
    # t(0.975, 3) = 3.182446305...
    half = 3.1824463 * sd / math.sqrt(4)
    assert estimate.value == pytest.approx(3.5)
    assert estimate.ci == pytest.approx((3.5 - half, 3.5 + half), rel=1e-6)
    assert mean_interval([5.0]).ci is None
    assert mean_interval([]).value is None


def test_a_drift_in_time_shows_as_a_fatigue_slope():
    rng = np.random.default_rng(3)
    labels = _labels(rng, 8, 10, np.zeros(8))
    drifted = Labels(**{**labels.__dict__, "seconds": labels.seconds + 0.5 * labels.position})
    flat = method_figures(labels).fatigue["session"]["seconds_slope"]
    slope = method_figures(drifted).fatigue["session"]["seconds_slope"]
    # Per 10 items: 0.5 s per item is 5 s; the flat session's interval covers 0 after removing the method step.
    assert slope["value"] - flat["value"] == pytest.approx(5.0, abs=1e-6)
    assert slope["ci"][0] > 0


def test_no_labels_give_empty_figures_not_errors():
    empty = Labels.from_lists(
        methods=["a", "b"], item=[], annotator=[], method=[], position=[], seconds=[], signed=[], gold=[]
    )
    figures = method_figures(empty).as_dict()
    assert [m["labels"] for m in figures["methods"]] == [0, 0]
    assert all(r["value"] is None for r in figures["paired"])
