"""Bootstrap intervals resample items, are deterministic for a seed, and the vectorised path (resampling counts
times per-unit sums) gives exactly the statistic of the explicitly resampled data."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import agreement


def test_generic_bootstrap_of_a_mean_is_close_to_the_normal_interval() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(2.0, 1.0, 400)
    result = agreement.bootstrap_ci(np.mean, data, n_boot=2000, seed=1)
    assert result.value == pytest.approx(data.mean())
    assert result.n == 400
    half_width = 1.96 * data.std(ddof=1) / np.sqrt(data.size)
    assert result.ci is not None
    assert result.ci[0] == pytest.approx(data.mean() - half_width, abs=0.03)
    assert result.ci[1] == pytest.approx(data.mean() + half_width, abs=0.03)


def test_generic_bootstrap_is_deterministic_for_a_seed() -> None:
    data = np.arange(50.0)
    first = agreement.bootstrap_ci(np.median, data, n_boot=300, seed=4)
    assert agreement.bootstrap_ci(np.median, data, n_boot=300, seed=4) == first
    assert agreement.bootstrap_ci(np.median, data, n_boot=300, seed=5).ci != first.ci


def test_generic_bootstrap_resamples_rows_of_a_matrix() -> None:
    rng = np.random.default_rng(2)
    matrix = np.sign(rng.normal(0.4, 1, (80, 3)))
    result = agreement.bootstrap_ci(lambda m: agreement.pairwise_agreement(m).value, matrix, n_boot=200)
    assert result.value == agreement.pairwise_agreement(matrix).value
    assert result.ci is not None
    assert result.value is not None
    assert result.ci[0] < result.value < result.ci[1]


def test_resample_counts_rows_sum_to_the_number_of_units() -> None:
    chunks = list(agreement.resample_counts(7, 25, seed=3))
    counts = np.concatenate(chunks)
    assert counts.shape == (25, 7)
    assert (counts.sum(axis=1) == 7).all()
    again = np.concatenate(list(agreement.resample_counts(7, 25, seed=3)))
    np.testing.assert_array_equal(counts, again)


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_replicates_equal_the_statistic_on_resampled_units(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = np.round(rng.uniform(-1, 1, (40, 5)), 2)
    mask = rng.random(values.shape) < 0.7
    mask[:, :2] = True  # every unit pairable, so the resampled units are the rows themselves
    signs = agreement.preference_sign(values)
    interval_stats = agreement._interval_unit_stats(values, mask)
    nominal_stats = agreement._nominal_unit_stats(signs, mask)
    pairwise_stats = agreement._pairwise_unit_stats(signs, mask, True, 0.0)
    counts = next(agreement.resample_counts(values.shape[0], 3, seed))
    for row in counts:
        rows = np.repeat(np.arange(values.shape[0]), row.astype(int))
        assert agreement._interval_alpha_from_sums(row @ interval_stats) == pytest.approx(
            agreement.krippendorff_alpha_interval(values[rows], mask[rows]), abs=1e-12
        )
        assert agreement._nominal_alpha_from_sums(row @ nominal_stats) == pytest.approx(
            agreement.krippendorff_alpha_nominal(signs[rows], mask[rows]), abs=1e-12
        )
        assert agreement._ratio_from_sums(row @ pairwise_stats) == pytest.approx(
            agreement.pairwise_agreement(signs[rows], mask[rows]).value, abs=1e-12
        )


def test_cross_mode_figures_carry_counts_and_intervals() -> None:
    rng = np.random.default_rng(9)
    truth = rng.uniform(-1, 1, 200)
    signed = np.clip(truth[:, None] + rng.normal(0, 0.3, (200, 4)), -1, 1)
    signed[rng.random(signed.shape) < 0.2] = np.nan
    figures = agreement.cross_mode_agreement(signed)
    assert set(figures) == {"alpha_interval", "alpha_nominal", "pairwise_with_ties", "pairwise_without_ties"}
    for estimate in figures.values():
        assert estimate.value is not None
        assert estimate.ci is not None
        assert estimate.ci[0] <= estimate.value <= estimate.ci[1]
        as_dict = estimate.as_dict()
        assert set(as_dict) == {"value", "n", "ci"}
        assert len(as_dict["ci"]) == 2
    alpha_interval = figures["alpha_interval"].value
    assert alpha_interval is not None
    assert alpha_interval > 0.6
    assert figures["alpha_interval"].n == int(
        (~np.isnan(signed)).sum(axis=1)[(~np.isnan(signed)).sum(axis=1) >= 2].sum()
    )
    assert agreement.cross_mode_agreement(signed) == figures
