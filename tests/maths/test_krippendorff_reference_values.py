"""Closed-form Krippendorff's α reproduces the published reference values and the `krippendorff` package."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from aggregation.maths import agreement

NAN = np.nan
# Krippendorff's own worked example (3 coders × 15 units, with missing values), also used on Wikipedia and in the
# krippendorff package's documentation. Rows are coders here, as printed; our functions take units × coders.
RELIABILITY_DATA = np.array(
    [
        [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
        [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
        [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
    ]
)


def test_interval_reference_value() -> None:
    assert agreement.krippendorff_alpha_interval(RELIABILITY_DATA.T) == pytest.approx(0.810845, abs=5e-7)


def test_nominal_reference_value() -> None:
    assert agreement.krippendorff_alpha_nominal(RELIABILITY_DATA.T) == pytest.approx(0.691358, abs=5e-7)


def test_an_explicit_mask_equals_nan_for_missing() -> None:
    units = RELIABILITY_DATA.T
    mask = ~np.isnan(units)
    zero_filled = np.nan_to_num(units, nan=0.0)
    assert agreement.krippendorff_alpha_interval(zero_filled, mask) == pytest.approx(0.810845, abs=5e-7)
    assert agreement.krippendorff_alpha_nominal(zero_filled, mask) == pytest.approx(0.691358, abs=5e-7)


@pytest.mark.parametrize("seed", range(40))
def test_random_masked_matrices_match_the_package(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_units = int(rng.integers(2, 60))
    n_coders = int(rng.integers(2, 9))
    if seed % 2:
        values = rng.integers(-3, 4, (n_units, n_coders)).astype(float)
    else:
        values = np.round(rng.uniform(-1, 1, (n_units, n_coders)), 3)
    mask = rng.random(values.shape) < rng.uniform(0.3, 0.95)
    mask[0, :2] = True  # at least one pairable unit
    values[0, :2] = [-1.0, 1.0]  # and some variation, so that α is defined
    with_nan = np.where(mask, values, np.nan)
    expected_interval = krippendorff.alpha(with_nan.T, level_of_measurement="interval")
    expected_nominal = krippendorff.alpha(with_nan.T, level_of_measurement="nominal")
    assert agreement.krippendorff_alpha_interval(values, mask) == pytest.approx(expected_interval, abs=1e-9)
    assert agreement.krippendorff_alpha_nominal(values, mask) == pytest.approx(expected_nominal, abs=1e-9)


def test_undefined_without_variation_or_pairs() -> None:
    assert np.isnan(agreement.krippendorff_alpha_interval(np.ones((4, 3))))
    assert np.isnan(agreement.krippendorff_alpha_interval(np.array([[1.0, NAN], [2.0, NAN]])))
    assert np.isnan(agreement.krippendorff_alpha_nominal(np.array([[1.0, NAN], [2.0, NAN]])))


def test_perfect_agreement_gives_one_and_the_scale_does_not_matter() -> None:
    values = np.array([[1.0, 1.0, 1.0], [-1.0, -1.0, NAN], [0.5, 0.5, 0.5]])
    assert agreement.krippendorff_alpha_interval(values) == pytest.approx(1.0)
    assert agreement.krippendorff_alpha_nominal(values) == pytest.approx(1.0)
    noisy = np.array([[1.0, 0.2, 0.9], [-1.0, -0.4, NAN], [0.5, 0.1, 0.3], [0.0, 0.7, -0.2]])
    assert agreement.krippendorff_alpha_interval(noisy * 7 + 3) == pytest.approx(
        agreement.krippendorff_alpha_interval(noisy), abs=1e-12
    )
