"""The leaderboard's Bradley-Terry fit equals `choix` on the same data (no ties) to 1e-6, its Davidson fit equals an
independent maximisation of the likelihood written from the paper's formula (scipy), and its figures keep their
invariants on random data."""

from __future__ import annotations

import choix
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from aggregation.maths import leaderboard as lb


def _data(seed: int, models: int = 5, items: int = 120, labels: int = 3, tie_rate: float = 0.0) -> lb.Comparisons:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, models)
    a = rng.integers(0, models, items)
    b = (a + rng.integers(1, models, items)) % models
    a, b = np.repeat(a, labels), np.repeat(b, labels)
    won = rng.random(a.size) < 1 / (1 + np.exp(-(theta[a] - theta[b])))
    outcome = np.where(rng.random(a.size) < tie_rate, lb.TIE, np.where(won, lb.WIN, lb.LOSS))
    return lb.Comparisons(np.repeat(np.arange(items), labels), a, b, outcome.astype(np.int64), np.ones(a.size))


def _choix_data(c: lb.Comparisons) -> list[tuple[int, int]]:
    return [
        (int(x), int(y)) if o == lb.WIN else (int(y), int(x))
        for x, y, o in zip(c.first, c.second, c.outcome, strict=True)
    ]


@pytest.mark.parametrize("seed", range(8))
def test_bradley_terry_mle_equals_choix(seed: int) -> None:
    data = _data(seed)
    ours = lb.fit(data, 5, prior=0.0)
    reference = choix.ilsr_pairwise(5, _choix_data(data), alpha=0.0, tol=1e-13)
    reference -= reference.mean()
    assert ours.tie == 0.0
    np.testing.assert_allclose(ours.strength, reference, atol=1e-6)


@pytest.mark.parametrize("alpha", [0.01, 0.5])
def test_penalised_fit_equals_choix_map_estimate(alpha: float) -> None:
    data = _data(11)
    ours = lb.fit(data, 5, prior=alpha)
    reference = choix.opt_pairwise(5, _choix_data(data), alpha=alpha, tol=1e-13)
    np.testing.assert_allclose(ours.strength, reference - reference.mean(), atol=1e-6)


def _davidson_negative_loglik(params: np.ndarray, c: lb.Comparisons, models: int) -> float:
    # Written from Davidson (1970) directly: P(i ≻ j) = π_i / (π_i + π_j + ν √(π_i π_j)), π = e^θ, θ_0 = 0.
    theta = np.concatenate([[0.0], params[: models - 1]])
    nu = np.exp(params[-1])
    pi_a, pi_b = np.exp(theta[c.first]), np.exp(theta[c.second])
    denominator = pi_a + pi_b + nu * np.sqrt(pi_a * pi_b)
    p = np.where(c.outcome == lb.WIN, pi_a, np.where(c.outcome == lb.LOSS, pi_b, nu * np.sqrt(pi_a * pi_b)))
    return -float(np.sum(c.weight * np.log(p / denominator)))


@pytest.mark.parametrize("seed", range(5))
def test_davidson_fit_equals_an_independent_maximisation(seed: int) -> None:
    data = _data(seed, tie_rate=0.25)
    rng = np.random.default_rng(seed)
    weighted = lb.Comparisons(data.item, data.first, data.second, data.outcome, rng.uniform(0.2, 1.0, len(data)))
    ours = lb.fit(weighted, 5, prior=0.0)
    result = minimize(
        _davidson_negative_loglik, np.zeros(5), args=(weighted, 5), method="BFGS", options={"gtol": 1e-10}
    )
    theta = np.concatenate([[0.0], result.x[:4]])
    np.testing.assert_allclose(ours.strength, theta - theta.mean(), atol=1e-6)
    assert ours.tie == pytest.approx(np.exp(result.x[-1]), abs=1e-6)


def test_clustered_covariance_is_the_sandwich_over_items() -> None:
    # Three identical copies of every label, as one item each or as one item for all three: the point estimate is
    # the same, and the covariance counts the copies as one piece of evidence only when they share the item.
    base = _data(3, labels=1)
    tripled = lb.Comparisons(
        np.repeat(base.item, 3),
        np.repeat(base.first, 3),
        np.repeat(base.second, 3),
        np.repeat(base.outcome, 3),
        np.ones(3 * len(base)),
    )
    separate = lb.Comparisons(np.arange(len(tripled)), tripled.first, tripled.second, tripled.outcome, tripled.weight)
    clustered, independent = lb.fit(tripled, 5, prior=0.0), lb.fit(separate, 5, prior=0.0)
    np.testing.assert_allclose(clustered.strength, independent.strength, atol=1e-9)
    ratio = np.diag(clustered.covariance) / np.diag(independent.covariance)
    np.testing.assert_allclose(ratio, 3.0, rtol=0.02)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), tie_rate=st.sampled_from([0.0, 0.2]))
def test_win_rates_are_complementary_and_strengths_centred(seed: int, tie_rate: float) -> None:
    data = _data(seed, models=4, items=60, tie_rate=tie_rate)
    fitted = lb.fit(data, 4)
    assert abs(fitted.strength.sum()) < 1e-9
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose((fitted.win_rate + fitted.win_rate.T)[off], 1.0, atol=1e-9)
    assert np.all(fitted.win_rate_ci[..., 0][off] <= fitted.win_rate[off])
    assert np.all(fitted.win_rate[off] <= fitted.win_rate_ci[..., 1][off])
    assert np.all(fitted.strength_ci[:, 0] < fitted.strength_ci[:, 1])
    # The order of the models is a label: permuting it permutes the figures.
    perm = np.random.default_rng(seed).permutation(4)
    moved = lb.Comparisons(data.item, perm[data.first], perm[data.second], data.outcome, data.weight)
    np.testing.assert_allclose(lb.fit(moved, 4).strength[perm], fitted.strength, atol=1e-7)


def test_signed_preferences_become_outcomes_with_the_tie_band_and_hesitation_weights() -> None:
    c = lb.comparisons_from_signed(
        [0, 0, 1, 1, 2],
        [0, 0, 1, 1, 2],
        [1, 1, 0, 0, 2],
        [0.5, 0.02, -0.3, np.nan, 0.9],
        tie_band=0.05,
        hesitation=[0.2, 0.0, 1.0, 0.0, 0.0],
    )
    # The NaN, the fully hesitant label and the model against itself are left out.
    assert c.outcome.tolist() == [lb.WIN, lb.TIE]
    np.testing.assert_allclose(c.weight, [0.8, 1.0])


def test_bad_input_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="signed preferences must lie"):
        lb.comparisons_from_signed([0], [0], [1], [1.5], tie_band=0.05)
    with pytest.raises(ValueError, match="at least two models"):
        lb.fit(_data(0), 1)
    with pytest.raises(ValueError, match=r"outside 0\.\.n_models-1"):
        lb.fit(_data(0, models=5), 3)


def test_an_unbeaten_model_stays_finite_under_the_default_prior() -> None:
    c = lb.Comparisons(
        np.arange(6), np.zeros(6, dtype=np.int64), np.ones(6, dtype=np.int64), np.full(6, lb.WIN), np.ones(6)
    )
    fitted = lb.fit(c, 2)
    assert np.all(np.isfinite(fitted.strength))
    assert fitted.strength[0] > 1.0
