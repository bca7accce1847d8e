"""Self-consistency per method (aggregation.maths.method_comparison.consistency_figures): the per-method figure is
1 − the mean of that method's distances with skipped repeats (NaN) left out, and the paired difference between
methods cancels whatever belongs to the person: adding a per-person offset to every distance of that person
leaves it unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths.method_comparison import consistency_figures
from aggregation.maths.self_consistency import signed_distance, sk_distance

METHODS = ["binary", "ifs"]


@st.composite
def repeats(draw):
    n_people = draw(st.integers(2, 6))
    per = draw(st.integers(1, 4))
    d = draw(st.lists(st.floats(0.0, 0.5), min_size=n_people * 2 * per, max_size=n_people * 2 * per))
    annotator = np.repeat(np.arange(n_people) * 7 + 3, 2 * per)
    method = np.tile(np.repeat([0, 1], per), n_people)
    return np.array(d), annotator, method


@settings(max_examples=60, deadline=None)
@given(repeats(), st.lists(st.floats(0.0, 0.4), min_size=6, max_size=6))
def test_per_method_value_and_paired_differences(data, offsets):
    d, annotator, method = data
    d = d.copy()
    d[0] = np.nan  # a skipped repeat
    figures = consistency_figures(d, annotator, method, METHODS)
    for m, entry in enumerate(figures["methods"]):
        mine = d[(method == m) & np.isfinite(d)]
        assert entry["n"] == mine.size
        if mine.size:
            assert entry["value"] == pytest.approx(1 - mine.mean())
    shift = np.array(offsets)[(annotator - 3) // 7]
    shifted = consistency_figures(d + shift, annotator, method, METHODS)
    before, after = figures["paired"][0], shifted["paired"][0]
    assert after["n"] == before["n"]
    if before["value"] is not None:
        assert after["value"] == pytest.approx(before["value"], abs=1e-9)


def test_distances_of_known_judgments():
    # Opposite certain preferences are at distance 1, and so are a tie (s = 0) and a certain preference.
    assert signed_distance([1.0, 0.5, 0.0], [-1.0, 0.5, 1.0]) == pytest.approx([1.0, 0.0, 1.0])
    # (0.6, 0.1) against (0.3, 0.5): √((0.09 + 0.16 + 0.01)/2).
    assert float(sk_distance(0.3, -0.4)) == pytest.approx(np.sqrt((0.09 + 0.16 + 0.01) / 2))
    assert all(e["value"] is None and e["n"] == 0 for e in consistency_figures([], [], [], METHODS)["methods"])
