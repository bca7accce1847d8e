"""The annotator-population interval of pairwise agreement: its pairs and its jackknife equal plain loops, and it
is wider than today's item interval when annotators differ."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import annotator_population as ap
from aggregation.maths.intervals import t_quantile


def _project(seed: int, annotators: int = 6, items: int = 40, per_item: int = 3):
    rng = np.random.default_rng(seed)
    slots = np.argsort(rng.random((items, annotators)), axis=1)[:, :per_item]
    skill = rng.uniform(0.5, 0.95, annotators)
    lean = np.where(rng.random(items) < 0.5, 1.0, -1.0)
    labels = np.where(rng.random(slots.shape) < skill[slots], lean[:, None], -lean[:, None])
    labels[rng.random(slots.shape) < 0.1] = np.nan
    return labels, slots


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_pairs_and_jackknife_equal_loops(seed: int) -> None:
    labels, slots = _project(seed)
    item, a, b, agree = ap.label_pairs(labels, slots)
    expected = []
    for i in range(labels.shape[0]):
        for s, t in itertools.combinations(range(labels.shape[1]), 2):
            if not (np.isnan(labels[i, s]) or np.isnan(labels[i, t])):
                lo, hi = sorted((slots[i, s], slots[i, t]))
                expected.append((i, lo, hi, int(labels[i, s] == labels[i, t])))
    assert sorted(zip(item.tolist(), a.tolist(), b.tolist(), agree.tolist(), strict=True)) == sorted(expected)

    est = ap.pairwise_agreement(item, a, b, agree)
    present = sorted(set(a.tolist()) | set(b.tolist()))
    left = np.array([agree[(a != j) & (b != j)].mean() for j in present])
    k = left.size
    half = t_quantile(0.95, k - 1) * np.sqrt((k - 1) / k * np.sum((left - left.mean()) ** 2))
    assert est.value == pytest.approx(agree.mean())
    assert est.population_ci is not None
    if half > 0:
        assert est.population_ci == pytest.approx((max(0, agree.mean() - half), min(1, agree.mean() + half)))


def test_different_annotators_widen_the_population_interval_only() -> None:
    labels, slots = _project(3, annotators=8, items=200)
    est = ap.pairwise_agreement(*ap.label_pairs(labels, slots))
    assert est.items_ci is not None
    assert est.population_ci is not None
    items_width = est.items_ci[1] - est.items_ci[0]
    assert est.population_ci[1] - est.population_ci[0] > 1.3 * items_width


def test_too_few_annotators_give_no_population_interval() -> None:
    est = ap.pairwise_agreement([0, 1, 2], [0, 0, 0], [1, 1, 1], [1, 0, 1])
    assert est.items_ci is not None
    assert est.population_ci is None
    with pytest.raises(ValueError, match="two different annotators"):
        ap.pairwise_agreement([0], [1], [1], [1])
