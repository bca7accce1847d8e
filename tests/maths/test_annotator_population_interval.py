"""The annotator-population interval of pairwise agreement: its pairs and its two-way variance equal plain loops,
it always holds the item interval, and it is wider than the item interval when annotators (or items) differ."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import annotator_population as ap


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
def test_pairs_and_two_way_variance_equal_loops(seed: int) -> None:
    labels, slots = _project(seed)
    item, a, b, agree = ap.label_pairs(labels, slots)
    expected = []
    for i in range(labels.shape[0]):
        for s, t in itertools.combinations(range(labels.shape[1]), 2):
            if not (np.isnan(labels[i, s]) or np.isnan(labels[i, t])):
                lo, hi = sorted((slots[i, s], slots[i, t]))
                expected.append((i, lo, hi, int(labels[i, s] == labels[i, t])))
    assert sorted(zip(item.tolist(), a.tolist(), b.tolist(), agree.tolist(), strict=True)) == sorted(expected)

    parts = ap.two_way_variance(item, a, b, agree)
    assert parts is not None
    assert (parts.items, parts.annotators_part) == pytest.approx(_two_way_by_loops(item, a, b, agree.astype(float)))
    est = ap.pairwise_agreement(item, a, b, agree)
    assert est.value == pytest.approx(agree.mean())
    assert est.population_ci is not None
    assert est.items_ci is not None
    assert est.population_ci[0] <= est.items_ci[0]
    assert est.items_ci[1] <= est.population_ci[1]


def _two_way_by_loops(item, a, b, y) -> tuple[float, float]:
    """The item variance and the jackknife's cross-item part, written as sums over items, annotators and pairs of
    label pairs."""
    n = y.size
    r = y.mean()
    items = sorted(set(item.tolist()))
    g = len(items)
    v_items = g / (g - 1) * sum((y[item == i] - r).sum() ** 2 for i in items) / n**2
    people = [j for j in sorted(set(a.tolist()) | set(b.tolist())) if ((a != j) & (b != j)).any()]
    # c[j, p]: how much leaving annotator j out moves R per unit of ỹ_p, minus its mean over j.
    c = np.array([[float(a[p] == j or b[p] == j) / ((a != j) & (b != j)).sum() for p in range(n)] for j in people])
    c -= c.mean(axis=0)
    q = c.T @ c  # the jackknife without its (k − 1)/k (module docstring)
    cross = sum(q[p, s] * (y[p] - r) * (y[s] - r) for p in range(n) for s in range(n) if item[p] != item[s])
    return v_items, max(cross, 0.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), annotators=st.integers(3, 9), per_item=st.integers(2, 3))
def test_population_interval_always_holds_the_item_interval(seed: int, annotators: int, per_item: int) -> None:
    labels, slots = _project(seed, annotators=annotators, items=30, per_item=min(per_item, annotators))
    est = ap.pairwise_agreement(*ap.label_pairs(labels, slots))
    if est.population_ci is not None and est.items_ci is not None:
        assert est.population_ci[0] <= est.items_ci[0] <= est.items_ci[1] <= est.population_ci[1]


def test_items_that_differ_widen_a_dense_design_beyond_the_items_alone() -> None:
    """MT-Bench's shape: every annotator labels every item, and items differ far more than annotators (some are
    clear, some coin flips). Dropping an annotator leaves every item in, so a jackknife over annotators alone does
    not see the items' draw; the two-way interval must be at least the item interval, and wider."""
    rng = np.random.default_rng(5)
    items, annotators = 80, 5
    clear = rng.random(items) < 0.5
    follow = np.where(clear, 0.97, 0.55)[:, None] * np.ones((1, annotators))
    lean = np.where(rng.random(items) < 0.5, 1.0, -1.0)
    labels = np.where(rng.random((items, annotators)) < follow, lean[:, None], -lean[:, None])
    slots = np.tile(np.arange(annotators), (items, 1))
    est = ap.pairwise_agreement(*ap.label_pairs(labels, slots))
    assert est.items_ci is not None
    assert est.population_ci is not None
    assert est.population_ci[0] < est.items_ci[0]
    assert est.items_ci[1] < est.population_ci[1]


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
