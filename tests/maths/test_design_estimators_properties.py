"""The Horvitz-Thompson and Hájek estimators of the model's accuracy: the right numbers on small cases, the variance
formula as a loop would compute it, and invariants (bounds in [0, 1], interval around the estimate, domains)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import accuracy


def test_hajek_and_horvitz_thompson_by_hand() -> None:
    y = np.array([1.0, 0.0, 1.0, 0.5])
    p = np.array([0.5, 0.5, 0.25, 0.25])
    hajek = accuracy.hajek(y, p)
    assert hajek.value == pytest.approx((2 + 0 + 4 + 2) / 12)
    ht = accuracy.horvitz_thompson(y, p, population_size=10)
    assert ht.value == pytest.approx(8 / 10)
    assert hajek.population == pytest.approx(12)
    assert hajek.items == 4
    assert hajek.labels == 4


def test_with_replacement_variance_matches_a_loop_over_strata() -> None:
    rng = np.random.default_rng(1)
    z = rng.normal(size=30)
    strata = rng.integers(0, 4, size=30)
    expected = 0.0
    for h in np.unique(strata):
        zh = z[strata == h]
        expected += zh.size / (zh.size - 1) * float(((zh - zh.mean()) ** 2).sum())
    assert accuracy.with_replacement_variance(z, strata) == pytest.approx(expected)
    # A stratum with one item is pooled with the other singletons.
    lone = np.array([0, 0, 1, 2])
    values = np.array([1.0, 3.0, 5.0, 9.0])
    assert accuracy.with_replacement_variance(values, lone) == pytest.approx(2 * 2.0 + 2 * 8.0)


def test_the_finite_population_correction_scales_each_stratum_by_its_unsampled_share() -> None:
    rng = np.random.default_rng(2)
    z = rng.normal(size=40)
    strata = np.repeat([0, 1], 20)
    fraction = np.where(strata == 0, 0.25, 0.5)  # n_h/N_h per stratum
    expected = sum((1.0 - f) * accuracy.with_replacement_variance(z[strata == h]) for h, f in ((0, 0.25), (1, 0.5)))
    assert accuracy.with_replacement_variance(z, strata, fraction) == pytest.approx(expected)


def test_drawing_more_of_a_finite_population_narrows_the_interval_but_not_the_label_noise() -> None:
    rng = np.random.default_rng(4)
    y = rng.choice([0.0, 0.5, 1.0], size=60)
    trials = np.full(60, 2.0)
    few = accuracy.hajek(y, np.full(60, 0.01), trials=trials)
    most = accuracy.hajek(y, np.full(60, 0.9), trials=trials)
    census = accuracy.hajek(y, np.ones(60), trials=trials)
    assert few.se is not None
    assert most.se is not None
    assert census.se is not None
    assert census.se < most.se < few.se
    # Every item drawn: what is left is the noise of two labels per item, not zero.
    assert census.se > 0.0


def test_a_domain_counts_the_items_outside_it_in_the_variance() -> None:
    p = np.full(6, 0.1)
    inside = accuracy.hajek(np.array([1.0, 0.0, 1.0, np.nan, np.nan, np.nan]), p)
    alone = accuracy.hajek(np.array([1.0, 0.0, 1.0]), p[:3])
    assert inside.value == pytest.approx(alone.value)
    assert inside.items == 3
    # Hájek linearised values are zero outside the domain: the variance is the same sum over a larger sample.
    assert inside.se is not None
    assert alone.se is not None
    assert inside.se < alone.se


def test_no_evidence_gives_no_estimate_and_one_item_the_whole_range() -> None:
    assert accuracy.hajek(np.array([np.nan, np.nan]), np.array([0.5, 0.5])).value is None
    assert accuracy.hajek(np.array([], dtype=float), np.array([], dtype=float)).ci is None
    assert accuracy.hajek(np.array([1.0]), np.array([0.5])).ci == (0.0, 1.0)
    with pytest.raises(ValueError, match="inclusion probability"):
        accuracy.hajek(np.array([1.0, 0.0]), np.array([0.0, 0.5]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        accuracy.hajek(np.array([1.5, 0.0]), np.array([0.5, 0.5]))


def test_per_item_share_and_majority() -> None:
    share, trials = accuracy.per_item_agreement([0, 0, 0, 2], [1, 1, 0, 0], 3)
    assert share[0] == pytest.approx(2 / 3)
    assert np.isnan(share[1])
    assert share[2] == 0
    assert trials.tolist() == [3, 0, 1]
    labels = np.array(
        [
            [1, 1, 0, np.nan],  # machine 1 leads alone
            [1, 0, np.nan, np.nan],  # tie of two answers: half credit
            [0, 0, 2, 1],  # machine 1 is not the plurality
            [np.nan] * 4,
            [2, 1, 0, np.nan],  # three answers tied
        ]
    )
    out = accuracy.majority_agreement(labels, np.ones(5))
    assert out[:3].tolist() == [1.0, 0.5, 0.0]
    assert np.isnan(out[3])
    assert out[4] == pytest.approx(1 / 3)


@st.composite
def samples(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(min_value=2, max_value=40))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    rng = np.random.default_rng(seed)
    binary = draw(st.booleans())
    y = rng.integers(0, 2, size=n).astype(float) if binary else rng.random(n)
    if draw(st.booleans()):
        y[rng.random(n) < 0.3] = np.nan
    if draw(st.booleans()):
        y[~np.isnan(y)] = draw(st.sampled_from([0.0, 1.0]))
    p = rng.uniform(0.01, 1.0, size=n)
    strata = rng.integers(0, draw(st.integers(min_value=1, max_value=4)), size=n)
    trials = rng.integers(1, 5, size=n).astype(float)
    return y, p, strata, trials


@settings(max_examples=200, deadline=None)
@given(sample=samples(), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_estimates_and_intervals_stay_in_the_unit_interval_and_hold_the_estimate(sample, level: float) -> None:
    y, p, strata, trials = sample
    est = accuracy.hajek(y, p, strata=strata, trials=trials, level=level)
    if np.isnan(y).all():
        assert est.value is None
        return
    assert est.value is not None
    assert est.ci is not None
    assert 0.0 <= est.value <= 1.0
    assert 0.0 <= est.ci[0] <= est.value + 1e-12
    assert est.value - 1e-12 <= est.ci[1] <= 1.0
    assert est.items == int((~np.isnan(y)).sum())
    # Hájek does not depend on the scale of the weights; a wider level gives a wider interval.
    assert accuracy.hajek(y, p / 2, strata=strata, trials=trials).value == pytest.approx(
        accuracy.hajek(y, p, strata=strata, trials=trials).value
    )
    wider = accuracy.hajek(y, p, strata=strata, trials=trials, level=min(level + 0.005, 0.999))
    assert wider.ci is not None
    assert wider.ci[0] <= est.ci[0] + 1e-12
    assert wider.ci[1] >= est.ci[1] - 1e-12
    ht = accuracy.horvitz_thompson(y, p, strata=strata, trials=trials, population_size=float((1 / p).sum()))
    assert ht.ci is not None
    assert 0.0 <= ht.ci[0] <= ht.ci[1] <= 1.0


@settings(max_examples=100, deadline=None)
@given(sample=samples())
def test_horvitz_thompson_equals_hajek_when_the_weights_add_up_to_the_population(sample) -> None:
    y, p, strata, _trials = sample
    full = np.where(np.isnan(y), 0.5, y)
    hajek = accuracy.hajek(full, p, strata=strata)
    ht = accuracy.horvitz_thompson(full, p, strata=strata, population_size=float((1 / p).sum()))
    assert ht.value == pytest.approx(hajek.value)
