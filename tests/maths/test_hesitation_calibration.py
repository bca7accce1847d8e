"""Hesitation calibration: the slope's interval covers the truth on known truths (tests/maths/hesitation_simulation.py,
small run), a person whose hesitation is a habit is seldom found to predict disagreement, the isotonic reliability
never rises with hesitation and equals a plain pool-adjacent-violators fit, and the diagram's bins count every
label."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import hesitation_calibration as hc
from tests.maths import hesitation_simulation as sim


@pytest.mark.slow
def test_the_slope_interval_covers_and_a_habit_seldom_predicts() -> None:
    calibrated = [sim.run(3, r, habit=False) for r in range(150)]
    habit = [sim.run(3, r, habit=True) for r in range(150)]
    assert 0.89 <= np.mean([r["covers"] for r in calibrated]) <= 0.99
    assert 0.89 <= np.mean([r["covers"] for r in habit]) <= 0.99
    assert np.mean([r["predicts"] for r in calibrated]) > 0.7
    assert np.mean([r["predicts"] for r in habit]) < 0.08


def _pava_by_definition(y: list[float]) -> list[float]:
    """Non-increasing least squares by repeated averaging of the first violating block (slow, obvious)."""
    blocks = [[v] for v in y]
    changed = True
    while changed:
        changed = False
        for k in range(len(blocks) - 1):
            if np.mean(blocks[k]) < np.mean(blocks[k + 1]):
                blocks[k : k + 2] = [blocks[k] + blocks[k + 1]]
                changed = True
                break
    return [float(np.mean(b)) for b in blocks for _ in b]


@settings(max_examples=60, deadline=None)
@given(d=st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=25))
def test_calibrated_reliability_is_the_isotonic_fit(d: list[float]) -> None:
    pi = np.linspace(0.0, 0.9, len(d))
    fitted = hc.calibrated_reliability(pi, d, pi)
    assert fitted.tolist() == pytest.approx(_pava_by_definition([1 - x for x in d]))
    assert np.all(np.diff(fitted) <= 1e-12)


def test_the_diagram_counts_every_label_and_short_data_give_no_slope() -> None:
    rng = np.random.default_rng(1)
    pi, d, item = rng.uniform(0, 1, 90), (rng.random(90) < 0.3).astype(float), np.repeat(np.arange(30), 3)
    bins = hc.reliability_diagram(pi, d, item, bins=4)
    assert sum(b.labels for b in bins) == 90
    for b in bins:
        inside = (pi >= b.low) & ((pi < b.high) if b.high < 1 else (pi <= 1))
        assert b.disagreement == pytest.approx(d[inside].mean())
    assert hc.hesitation_slope([0.2, 0.2, 0.2, 0.2], [0, 1, 0, 1], [0, 1, 2, 3]).ci is None
    with pytest.raises(ValueError, match="one entry per label"):
        hc.hesitation_slope([0.2], [0, 1], [0, 1])
