"""Self-consistency per annotator: 1 − mean distance to their own repeats, with a t interval over repeats."""

from __future__ import annotations

import numpy as np

from aggregation.maths.intervals import t_quantile
from aggregation.maths.self_consistency import consistency_with_interval


def test_known_values():
    distance = np.array([0.0, 0.0, 0.2, 0.4, 0.1])
    who = np.array([0, 0, 1, 1, 2])
    result = consistency_with_interval(distance, who, 4)
    assert result["value"][0] == 1.0
    assert result["n"].tolist() == [2, 2, 1, 0]
    half = t_quantile(0.95, 1) * np.std([0.2, 0.4], ddof=1) / np.sqrt(2)
    assert np.isclose(result["value"][1], 0.7)
    assert np.isclose(result["low"][1], max(0.0, 0.7 - half))
    assert np.isclose(result["high"][1], min(1.0, 0.7 + half))
    # One repeat: a value, no interval; none: nothing.
    assert np.isclose(result["value"][2], 0.9)
    assert np.isnan(result["low"][2])
    assert np.isnan(result["value"][3])


def test_interval_covers_at_about_95_percent():
    rng = np.random.default_rng(5)
    truth, covered, runs = 0.8, 0, 2000
    for _ in range(runs):
        d = np.clip(rng.normal(1 - truth, 0.05, 15), 0, 1)  # clipping almost never bites at this spread
        r = consistency_with_interval(d, np.zeros(15, dtype=np.int64), 1)
        covered += r["low"][0] <= truth <= r["high"][0]
    assert 0.93 <= covered / runs <= 0.97
