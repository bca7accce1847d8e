"""Calibration, certification and audit items are drawn reproducibly from the project seed, each with the inclusion
probability it really had: stratified draws give n_h/N_h in every stratum, Poisson draws their rate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import sampling


def test_draws_are_reproducible_from_the_seed_and_differ_by_salt_and_seed() -> None:
    keys = [f"item-{i}" for i in range(50)]
    first = sampling.uniform_draws(seed=7, keys=keys, salt="certification")
    assert np.array_equal(first, sampling.uniform_draws(seed=7, keys=keys, salt="certification"))
    assert not np.array_equal(first, sampling.uniform_draws(seed=8, keys=keys, salt="certification"))
    assert not np.array_equal(first, sampling.uniform_draws(seed=7, keys=keys, salt="audit"))
    assert np.all((first >= 0) & (first < 1))
    # One item's draw does not depend on which other items are drawn with it.
    assert sampling.uniform_draws(seed=7, keys=keys[3:4], salt="certification")[0] == first[3]


def test_stratified_draw_takes_the_smallest_draws_of_each_stratum() -> None:
    u = np.array([0.9, 0.1, 0.5, 0.3, 0.2, 0.8, 0.05, 0.7])
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    draw = sampling.stratified_draw(draws=u, strata=strata, total=4, how="equal")
    assert draw.drawn.tolist() == [False, True, False, True, True, False, True, False]
    assert draw.probability.tolist() == [0.5] * 8
    assert draw.sample.tolist() == [2, 2]


def test_confidence_bins_and_equal_allocation_redistribute_what_a_small_bin_cannot_take() -> None:
    confidence = np.array([0.5, 0.55, 0.65, 0.9, 1.0, 0.95, 0.99, 0.3, 1.2])
    assert sampling.confidence_strata(confidence).tolist() == [0, 0, 1, 4, 4, 4, 4, 0, 4]
    assert sampling.allocate([3, 50, 50], 30, "equal").tolist() == [3, 14, 13]
    assert sampling.allocate([3, 50, 50], 30, "proportional").sum() == 30
    with pytest.raises(ValueError, match="confidence"):
        sampling.confidence_strata([0.7, np.nan])


def test_the_recorded_probability_is_the_frequency_with_which_an_item_is_drawn() -> None:
    rng = np.random.default_rng(3)
    strata = np.repeat([0, 1, 2], [10, 30, 60])
    eligible = np.ones(100, dtype=bool)
    eligible[-5:] = False
    counts = np.zeros(100)
    runs = 4000
    for _ in range(runs):
        draw = sampling.stratified_draw(draws=rng.random(100), strata=strata, total=24, how="equal", eligible=eligible)
        counts += draw.drawn
    # Every run records the same probabilities (they depend on the design, not on the draw).
    assert draw.probability[:10] == pytest.approx(0.8)
    assert draw.probability[10:40] == pytest.approx(8 / 30)
    assert draw.probability[40:95] == pytest.approx(8 / 55)
    assert np.all(draw.probability[95:] == 0)
    assert counts[95:].sum() == 0
    se = np.sqrt(draw.probability * (1 - draw.probability) / runs)
    assert np.all(np.abs(counts / runs - draw.probability)[:95] < 4.5 * se[:95])


def test_poisson_draw_records_its_rate() -> None:
    draw = sampling.poisson_draw(draws=np.linspace(0, 0.99, 100), rate=0.1)
    assert draw.drawn.sum() == 10
    assert np.all(draw.probability == 0.1)
    with pytest.raises(ValueError, match="rate"):
        sampling.poisson_draw(draws=[0.5], rate=0.0)


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=6),
    total=st.integers(min_value=0, max_value=150),
    how=st.sampled_from(["equal", "proportional"]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_design_weights_add_up_to_each_stratum_population(sizes: list[int], total: int, how: str, seed: int) -> None:
    strata = np.repeat(np.arange(len(sizes)), sizes)
    u = np.random.default_rng(seed).random(strata.size)
    draw = sampling.stratified_draw(
        draws=u,
        strata=strata,
        total=total,
        how=how,
        n_strata=len(sizes),  # type: ignore[arg-type]
    )
    assert draw.population.tolist() == sizes
    assert int(draw.drawn.sum()) == min(total, sum(sizes))
    assert np.all(draw.sample <= draw.population)
    for h, size in enumerate(sizes):
        drawn_here = draw.drawn & (strata == h)
        if drawn_here.any():
            assert float((1 / draw.probability[drawn_here]).sum()) == pytest.approx(size)
        assert np.all((draw.probability[strata == h] > 0) == (draw.sample[h] > 0))
    assert np.all((draw.probability >= 0) & (draw.probability <= 1))
