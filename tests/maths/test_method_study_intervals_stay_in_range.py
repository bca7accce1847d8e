"""The method-study report's per-method figures (agreement with gold, with peers, seconds per item) have intervals
inside their possible range on random small studies, with the mean inside its interval and no interval from one
annotator (hypothesis over random labels)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths.method_comparison import FIGURE_BOUNDS, Labels, mean_interval, method_figures


def test_a_t_interval_leaving_zero_to_one_is_truncated_to_it():
    estimate = mean_interval([0.0, 1.0, 1.0], bounds=(0.0, 1.0))
    unbounded = mean_interval([0.0, 1.0, 1.0])

    assert unbounded.ci[0] < 0 < 1 < unbounded.ci[1]
    assert estimate.ci == (0.0, 1.0)
    assert estimate.value == unbounded.value


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),  # annotator
            st.integers(0, 5),  # item
            st.integers(0, 1),  # method
            st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]),  # signed preference
            st.floats(0, 600),  # seconds
        ),
        min_size=1,
        max_size=30,
        unique_by=lambda row: (row[0], row[1]),
    ),
    st.lists(st.sampled_from([-1, 0, 1]), min_size=6, max_size=6),
)
def test_every_per_method_interval_lies_in_its_range(rows, gold):
    labels = Labels.from_lists(
        methods=["ifs", "binary"],
        annotator=[r[0] for r in rows],
        item=[r[1] for r in rows],
        method=[r[2] for r in rows],
        signed=[r[3] for r in rows],
        gold=[gold[r[1]] for r in rows],
        seconds=[r[4] for r in rows],
        position=list(range(len(rows))),
    )
    for entry in method_figures(labels).as_dict()["methods"]:
        for figure, (low, high) in FIGURE_BOUNDS.items():
            estimate = entry[figure]
            if estimate["ci"] is None:
                continue
            assert estimate["n"] >= 2
            ci_low, ci_high = estimate["ci"]
            assert low <= ci_low <= estimate["value"] + 1e-12
            assert estimate["value"] <= ci_high + 1e-12
            assert high is None or ci_high <= high
            assert np.isfinite(ci_high)
