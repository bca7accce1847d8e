"""Nominal α on data with many distinct values (continuous numbers given by mistake) is computed sparsely, with
the same result as the reference package, and without a units × categories table; the pairwise shares, which need
that table, refuse such data with a clear error instead of running out of memory."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aggregation.maths.agreement import krippendorff_alpha_nominal, pairwise_agreement, pairwise_agreement_per_unit


@settings(max_examples=40, deadline=None)
@given(
    values=arrays(np.float64, st.tuples(st.integers(2, 60), st.integers(2, 5)), elements=st.integers(0, 2000)),
    holes=st.data(),
)
def test_many_categories_match_the_reference(values, holes):
    mask = holes.draw(arrays(np.bool_, values.shape, elements=st.booleans()))
    with_nan = np.where(mask, values, np.nan)
    if (mask.sum(axis=1) >= 2).sum() < 1 or np.unique(values[mask]).size < 2:
        return  # undefined for the reference too
    expected = krippendorff.alpha(with_nan.T, level_of_measurement="nominal")
    assert np.isclose(krippendorff_alpha_nominal(values, mask), expected, atol=1e-9, equal_nan=True)


def test_continuous_values_on_a_large_matrix_finish_and_are_defined():
    # 500,000 distinct values: a dense table would need 100,000 × 500,000 cells; the sparse count needs none.
    rng = np.random.default_rng(7)
    values = rng.random((100_000, 5))
    values[:50_000, 1] = values[:50_000, 0]  # half the units have one agreeing pair
    alpha = krippendorff_alpha_nominal(values)
    # The reference builds a dense table over every distinct value (cubic in their number): 100 units suffice.
    small = values[:100]
    assert np.isclose(
        krippendorff_alpha_nominal(small), krippendorff.alpha(small.T, level_of_measurement="nominal"), atol=1e-12
    )
    assert 0.0 < alpha < 1.0


def test_pairwise_agreement_on_continuous_values_is_refused_with_a_reason():
    # The pairwise shares need a units × categories table; on 500,000 distinct values it would not fit, so the
    # public functions refuse with a message that says why and what to use instead, rather than run out of memory.
    values = np.random.default_rng(3).random((100_000, 5))
    with pytest.raises(ValueError, match="continuous values") as refused:
        pairwise_agreement(values)
    assert "krippendorff_alpha_nominal" in str(refused.value)
    with pytest.raises(ValueError, match="continuous values"):
        pairwise_agreement_per_unit(values)
    # The same values binned into categories are fine.
    assert 0.0 <= pairwise_agreement(np.floor(values * 4)).value <= 1.0
