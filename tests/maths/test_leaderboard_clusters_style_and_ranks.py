"""Leaderboards clustered by prompt, with style control and simultaneous rank intervals, on simulated projects with a
known truth (tests/maths/leaderboard_clusters_simulation.py; its ``--runs`` gives the full Monte-Carlo): the
clustered intervals cover, their width agrees with a bootstrap over prompts, style control recovers a planted length
effect that the plain fit mistakes for strength, the style fit equals an independent maximisation, and rank intervals
hold every model's rank at once."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from aggregation.maths import leaderboard
from aggregation.maths.rank_intervals import rank_intervals
from aggregation.maths.style import style_differences, style_features
from tests.maths import leaderboard_clusters_simulation as sim

RUNS = 40


@pytest.fixture(scope="module")
def runs() -> list[dict[str, float]]:
    return [sim.run(seed) for seed in range(RUNS)]


def test_strength_intervals_clustered_by_prompt_cover(runs):
    # 200 intervals (40 projects × 5 models); the full run (README) gives 0.949 over 2,000.
    coverage = np.mean([r["strengths_by_prompt"] for r in runs])
    assert 0.88 <= coverage <= 1.0


def test_clustered_width_agrees_with_a_bootstrap_over_prompts():
    clustered, bootstrap = sim.bootstrap_width(seed=0, replicates=200)
    assert abs(clustered / bootstrap - 1) < 0.10


def test_style_control_recovers_the_planted_length_effect(runs):
    # The effect the model can see: the planted 0.8, attenuated by the prompt effects it averages over (as
    # marginalising any logistic model does).
    gamma = sim.truth()[1]
    assert 0.6 < gamma < sim.GAMMA
    rng = np.random.default_rng(3)
    comparisons, prompt, z = sim.data(rng, 400)
    clustered = sim.by_prompt(comparisons, prompt)
    styled = leaderboard.fit(clustered, 5, ties="none", prior=0.0, covariates=z)
    plain = leaderboard.fit(clustered, 5, ties="none", prior=0.0)
    assert styled.style_ci[0, 0] < gamma < styled.style_ci[0, 1]
    assert styled.style_ci[0, 0] > 0  # the effect is found, not only allowed
    # Longer answers come from the stronger models: without control their spread is overstated.
    spread_styled = styled.strength.max() - styled.strength.min()
    spread_plain = plain.strength.max() - plain.strength.min()
    assert spread_plain > spread_styled
    assert np.mean([r["style_by_prompt"] for r in runs]) >= 0.85


def _negative_loglik(params: np.ndarray, c: leaderboard.Comparisons, z: np.ndarray) -> float:
    # Written from the model directly: P(a ≻ b) = logistic(θ_a − θ_b + γ z), θ_0 = 0.
    theta = np.concatenate([[0.0], params[:4]])
    logit = theta[c.first] - theta[c.second] + params[4] * z
    won = c.outcome == leaderboard.WIN
    return float(np.sum(np.logaddexp(0.0, np.where(won, -logit, logit))))


def test_the_unpenalised_style_fit_equals_an_independent_maximisation():
    comparisons, prompt, z = sim.data(np.random.default_rng(5), 80)
    ours = leaderboard.fit(sim.by_prompt(comparisons, prompt), 5, ties="none", prior=0.0, covariates=z)
    result = minimize(_negative_loglik, np.zeros(5), args=(comparisons, z), method="BFGS", options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], result.x[:4]])
    np.testing.assert_allclose(ours.strength, theta - theta.mean(), atol=1e-6)
    assert ours.style[0] == pytest.approx(result.x[4], abs=1e-6)


def test_rank_intervals_hold_every_rank_at_once(runs):
    assert np.mean([r["ranks_by_prompt"] for r in runs]) >= 0.95


def test_rank_intervals_widen_when_models_are_indistinguishable():
    strength = np.array([0.5, 0.49, 0.0, -0.99])
    covariance = np.diag([0.01, 0.01, 0.01, 0.01])
    ranks = rank_intervals(strength, covariance)
    assert list(ranks.rank) == [1, 2, 3, 4]
    assert (ranks.lower[0], ranks.upper[0]) == (1, 2)  # the top two cannot be told apart
    assert (ranks.lower[1], ranks.upper[1]) == (1, 2)
    assert (ranks.lower[3], ranks.upper[3]) == (4, 4)  # the last is surely last
    assert np.all(ranks.lower <= ranks.rank)
    assert np.all(ranks.rank <= ranks.upper)


def test_style_features_count_length_and_markdown():
    text = "# Title\n\nSome **bold** words.\n\n- one\n- two\n1. three\n"
    assert style_features(text) == (11, 1, 3, 1)  # the markers count as words
    z = style_differences(["a b c d", ""], ["a b", ""])
    assert z[0, 0] == pytest.approx(2 / 6)
    assert np.all(z[1] == 0)
