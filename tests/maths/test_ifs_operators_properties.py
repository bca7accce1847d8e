"""Every aggregation operator is a proper IFS aggregation: valid, idempotent, bounded, monotone, ordered, and it
ignores masked judgments (the result equals aggregating only the present ones with renormalised weights)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from aggregation.maths import ifs

OPERATORS = ifs.OPERATORS
# IFWA clips its inputs to [eps, 1 − eps], so its guarantees hold up to eps at the edges of the domain.
SLACK = {"weighted_mean": 1e-12, "ifwa": ifs.IFWA_EPS + 1e-12, "ifwg": 1e-12}

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
per_mille = st.integers(min_value=0, max_value=1000).map(lambda v: v / 1000)


@st.composite
def ifs_value(draw: st.DrawFn, component: st.SearchStrategy[float] = unit) -> tuple[float, float]:
    mu = draw(component)
    nu = draw(component) * (1.0 - mu)
    return mu, nu


@st.composite
def judgments(draw: st.DrawFn, max_annotators: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One cell: k annotators' (μ, ν) and positive weights."""
    k = draw(st.integers(min_value=1, max_value=max_annotators))
    component = draw(st.sampled_from([unit, per_mille]))
    values = draw(st.lists(ifs_value(component), min_size=k, max_size=k))
    weights = draw(st.lists(st.floats(min_value=0.01, max_value=10.0), min_size=k, max_size=k))
    mu, nu = (np.array(v) for v in zip(*values, strict=True))
    return mu, nu, np.array(weights)


def run(operator: str, mu: np.ndarray, nu: np.ndarray, w: np.ndarray | None = None, mask=None) -> tuple[float, float]:
    out = ifs.aggregate(mu, nu, operator, w, mask)  # type: ignore[arg-type]
    return float(out.mu), float(out.nu)


# Valid in floating point (μ + ν rounds to 1) but not exactly: a power would amplify the excess to 2e-5.
ROUNDED_EDGE = (np.array([4e-156, 1.0, 1.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0625, 1.0, 1.0]))


@pytest.mark.parametrize("operator", OPERATORS)
@settings(max_examples=150, deadline=None)
@given(cell=judgments())
@example(cell=ROUNDED_EDGE)
def test_output_is_a_valid_ifs_value(operator: str, cell) -> None:
    mu, nu, w = cell
    out_mu, out_nu = run(operator, mu, nu, w)
    assert out_mu >= 0.0
    assert out_nu >= 0.0
    assert out_mu + out_nu <= 1.0 + 1e-9


@pytest.mark.parametrize("operator", OPERATORS)
@settings(max_examples=200, deadline=None)
@given(value=ifs_value(), k=st.integers(min_value=1, max_value=6), weights=st.lists(unit, min_size=6, max_size=6))
def test_idempotent_when_everyone_agrees(operator: str, value, k: int, weights) -> None:
    w = np.array(weights[:k]) + 0.01
    out_mu, out_nu = run(operator, np.full(k, value[0]), np.full(k, value[1]), w)
    if operator == "ifwa":
        # Idempotent on its clipped domain: the only change is the documented clip.
        value = tuple(float(np.clip(v, ifs.IFWA_EPS, 1 - ifs.IFWA_EPS)) for v in value)
    assert out_mu == pytest.approx(value[0], abs=1e-9)
    assert out_nu == pytest.approx(value[1], abs=1e-9)


@pytest.mark.parametrize("operator", OPERATORS)
@settings(max_examples=150, deadline=None)
@given(cell=judgments())
def test_bounded_by_componentwise_min_and_max(operator: str, cell) -> None:
    mu, nu, w = cell
    out_mu, out_nu = run(operator, mu, nu, w)
    slack = SLACK[operator]
    assert mu.min() - slack <= out_mu <= mu.max() + slack
    assert nu.min() - slack <= out_nu <= nu.max() + slack


@pytest.mark.parametrize("operator", OPERATORS)
@settings(max_examples=150, deadline=None)
@given(cell=judgments(), which=st.integers(min_value=0, max_value=5), share=unit)
def test_monotone_in_support_and_opposition(operator: str, cell, which: int, share: float) -> None:
    mu, nu, w = cell
    i = which % mu.size
    before_mu, before_nu = run(operator, mu, nu, w)

    more_support = mu.copy()
    more_support[i] += share * (1.0 - mu[i] - nu[i])
    after_mu, after_nu = run(operator, more_support, nu, w)
    assert after_mu >= before_mu - 1e-12
    assert after_nu <= before_nu + 1e-12

    less_opposition = nu.copy()
    less_opposition[i] *= 1.0 - share
    after_mu, after_nu = run(operator, mu, less_opposition, w)
    assert after_mu >= before_mu - 1e-12
    assert after_nu <= before_nu + 1e-12


@settings(max_examples=200, deadline=None)
@given(cell=judgments())
def test_ifwa_support_above_mean_above_ifwg(cell) -> None:
    mu, nu, w = cell
    mean = ifs.weighted_mean(mu, nu, w)
    averaging = ifs.ifwa(mu, nu, w)
    geometric = ifs.ifwg(mu, nu, w)
    eps = ifs.IFWA_EPS
    assert float(averaging.mu) >= float(mean.mu) - eps - 1e-12
    assert float(mean.mu) >= float(geometric.mu) - 1e-12
    # Opposition goes the other way round.
    assert float(averaging.nu) <= float(mean.nu) + eps + 1e-12
    assert float(mean.nu) <= float(geometric.nu) + 1e-12


def test_ordering_is_strict_on_a_spread_example() -> None:
    mu = np.array([0.1, 0.5, 0.8])
    nu = np.array([0.7, 0.3, 0.1])
    averaging, mean, geometric = (ifs.aggregate(mu, nu, op) for op in ("ifwa", "weighted_mean", "ifwg"))
    assert averaging.mu > mean.mu > geometric.mu
    assert averaging.nu < mean.nu < geometric.nu


@pytest.mark.parametrize("operator", OPERATORS)
def test_masked_judgments_are_ignored_across_a_whole_array(operator: str) -> None:
    rng = np.random.default_rng(7)
    shape = (40, 3, 2, 5)
    mu = rng.integers(0, 1001, shape) / 1000
    nu = np.floor(rng.random(shape) * (1000 - mu * 1000)) / 1000
    mask = rng.random(shape) < 0.6
    mask[0, 0, 0, :] = False  # one cell with nobody
    w = rng.uniform(0.1, 2.0, 5)
    w[0] = 0.0  # a present annotator of zero weight must not count either (nor turn IFWG's 0 · log 0 into NaN)
    garbage_mu = np.where(mask, mu, np.nan)
    garbage_nu = np.where(mask, nu, 7.0)
    result = ifs.aggregate(garbage_mu, garbage_nu, operator, w, mask)  # type: ignore[arg-type]

    assert np.isnan(result.mu[0, 0, 0])
    assert np.isnan(result.nu[0, 0, 0])
    for cell in np.ndindex(shape[:-1]):
        present = mask[cell]
        if not present.any():
            continue
        expected = ifs.aggregate(mu[cell][present], nu[cell][present], operator, w[present])  # type: ignore[arg-type]
        assert result.mu[cell] == pytest.approx(float(expected.mu), abs=1e-12, nan_ok=True)
        assert result.nu[cell] == pytest.approx(float(expected.nu), abs=1e-12, nan_ok=True)
        assert np.isnan(result.mu[cell]) == (not (present & (w > 0)).any())


def test_per_cell_weights_broadcast_and_renormalise() -> None:
    mu = np.array([[0.2, 0.8], [0.2, 0.8]])
    nu = np.array([[0.6, 0.1], [0.6, 0.1]])
    w = np.array([[1.0, 3.0], [3.0, 1.0]])
    out = ifs.weighted_mean(mu, nu, w)
    assert out.mu == pytest.approx([0.65, 0.35])
    assert out.nu == pytest.approx([0.225, 0.475])


def test_unnormalised_weights_use_the_papers_guard() -> None:
    mu = np.array([0.6, 0.7])
    nu = np.array([0.3, 0.2])
    out = ifs.weighted_mean(mu, nu, np.array([1.0, 1.0]), normalize=False)
    # Raw sums (1.3, 0.5) exceed 1 together, so both are divided by 1.8.
    assert float(out.mu) == pytest.approx(1.3 / 1.8)
    assert float(out.nu) == pytest.approx(0.5 / 1.8)
    small = ifs.weighted_mean(mu, nu, np.array([0.25, 0.25]), normalize=False)
    assert float(small.mu) == pytest.approx(0.325)
    assert float(small.nu) == pytest.approx(0.125)


def test_ifwa_annihilator_is_softened_by_the_clip() -> None:
    mu = np.array([0.5, 0.5, 0.5, 0.5, 0.5])
    nu = np.array([0.0, 0.4, 0.4, 0.4, 0.4])
    out = ifs.ifwa(mu, nu)
    # Unclipped, one ν = 0 would force ν = 0; clipped, it reads as one per-mille step and still pulls hard.
    assert float(out.nu) == pytest.approx(ifs.IFWA_EPS**0.2 * 0.4**0.8)
    assert 0.1 < float(out.nu) < 0.5 * float(ifs.weighted_mean(mu, nu).nu)


def test_ifwg_zero_support_annihilates_support() -> None:
    out = ifs.ifwg(np.array([0.0, 0.9, 0.9]), np.array([0.5, 0.05, 0.05]))
    assert float(out.mu) == 0.0


@pytest.mark.parametrize("operator", OPERATORS)
def test_invalid_inputs_are_rejected(operator: str) -> None:
    with pytest.raises(ValueError, match="invalid IFS value"):
        ifs.aggregate(np.array([0.7, 0.2]), np.array([0.4, 0.1]), operator)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid IFS value"):
        ifs.aggregate(np.array([np.nan, 0.2]), np.array([0.1, 0.1]), operator)  # type: ignore[arg-type]


def test_unknown_operator_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown operator"):
        ifs.aggregate(np.array([0.5]), np.array([0.5]), "paper_eq7")  # type: ignore[arg-type]


def test_aggregate_all_equals_one_operator_at_a_time() -> None:
    rng = np.random.default_rng(3)
    shape = (30, 2, 3, 4)
    mu = rng.integers(0, 1001, shape) / 1000
    nu = np.floor(rng.random(shape) * (1000 - mu * 1000)) / 1000
    mask = rng.random(shape) < 0.7
    w = np.array([0.0, 1.0, 2.0, 0.5])  # a zero-weight annotator too
    together = ifs.aggregate_all(mu, nu, w, mask)
    assert set(together) == set(OPERATORS)
    for operator in OPERATORS:
        alone = ifs.aggregate(mu, nu, operator, w, mask)
        np.testing.assert_array_equal(together[operator].mu, alone.mu)
        np.testing.assert_array_equal(together[operator].nu, alone.nu)
