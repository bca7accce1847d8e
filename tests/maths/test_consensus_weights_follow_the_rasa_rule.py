"""With self-inclusion and no shrinkage (prior_items=0) the iterative consensus is crowd-kit's RASA update (Li 2019):
checked against a plain per-annotator loop of that algorithm, with the χ² quantile checked against closed forms and
table values."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from aggregation.maths import weights


@pytest.mark.parametrize("p", [0.025, 0.05, 0.5, 0.9])
def test_chi2_quantile_closed_forms(p: float) -> None:
    # χ²(1) is a squared standard normal; χ²(2) is exponential with mean 2.
    assert weights.chi2_isf(p, 1) == pytest.approx(NormalDist().inv_cdf(1 - p / 2) ** 2, rel=1e-9)
    assert weights.chi2_isf(p, 2) == pytest.approx(-2 * math.log(p), rel=1e-9)


@pytest.mark.parametrize(
    ("dof", "expected"),
    [(5, 12.832502), (10, 20.483177), (30, 46.979242), (100, 129.561197)],  # published 97.5 % points
)
def test_chi2_quantile_table_values(dof: int, expected: float) -> None:
    assert weights.chi2_isf(0.025, dof) == pytest.approx(expected, abs=2e-6)


def test_chi2_quantile_for_many_items_is_near_the_normal_approximation() -> None:
    dof = 100_000
    normal = dof + NormalDist().inv_cdf(0.975) * math.sqrt(2 * dof)
    assert weights.chi2_isf(0.025, dof) == pytest.approx(normal, rel=1e-3)


def rasa_by_loop(
    embeddings: dict[tuple[int, int], np.ndarray], n_iter: int, tol: float, alpha: float
) -> dict[int, float]:
    """Li (2019) as crowd-kit's RASA does it, over (item, annotator) → embedding rows."""
    annotators = sorted({a for _, a in embeddings})
    items = sorted({i for i, _ in embeddings})
    prior = {a: weights.chi2_isf(alpha / 2, sum(1 for _, b in embeddings if b == a)) for a in annotators}
    skills = dict.fromkeys(annotators, 1.0)
    last = None
    for _ in range(n_iter):
        aggregated = {}
        for i in items:
            rows = [(a, e) for (j, a), e in embeddings.items() if j == i]
            aggregated[i] = sum(skills[a] * e for a, e in rows) / sum(skills[a] for a, _ in rows)
        totals = dict.fromkeys(annotators, 0.0)
        for (i, a), e in embeddings.items():
            totals[a] += float(np.sum((e - aggregated[i]) ** 2))
        skills = {a: prior[a] / max(totals[a], 1e-5) for a in annotators}
        if last is not None:
            change = sum(float(np.sum((aggregated[i] - last[i]) ** 2)) for i in items)
            size = sum(float(np.sum(aggregated[i] ** 2)) for i in items)
            if change / size < tol:
                break
        last = aggregated
    total = sum(skills.values())
    return {a: s / total for a, s in skills.items()}


@pytest.mark.parametrize("seed", range(3))
def test_self_inclusive_consensus_matches_the_rasa_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_items, n_annotators = 40, 5
    mu = rng.uniform(0, 0.6, (n_items, 2, n_annotators))
    nu = rng.uniform(0, 0.4, (n_items, 2, n_annotators))
    noise = np.array([0.02, 0.05, 0.1, 0.2, 0.3])
    mu = np.clip(mu.mean(axis=-1, keepdims=True) + rng.normal(0, noise, mu.shape), 0, 0.6)
    item_mask = rng.random((n_items, n_annotators)) < 0.7
    item_mask[:, :2] = True
    mask = np.repeat(item_mask[:, None, :], 2, axis=1)

    embeddings = {
        (i, a): np.concatenate([mu[i, :, a], nu[i, :, a]])
        for i in range(n_items)
        for a in range(n_annotators)
        if item_mask[i, a]
    }
    expected = rasa_by_loop(embeddings, n_iter=100, tol=1e-9, alpha=0.05)
    # prior_items=0: the plain rule, without the shrinkage toward equal weight that RASA does not have.
    result = weights.iterative_consensus_weights(
        mu, nu, mask, exclude_self=False, max_iter=100, tol=1e-9, prior_items=0
    )
    assert result.converged
    np.testing.assert_allclose(result.weight, [expected[a] for a in range(n_annotators)], rtol=1e-6)


def test_stops_at_max_iter_and_says_so() -> None:
    rng = np.random.default_rng(1)
    mu = rng.uniform(0, 0.5, (30, 2, 4))
    nu = rng.uniform(0, 0.5, (30, 2, 4))
    result = weights.iterative_consensus_weights(mu, nu, max_iter=2, tol=0.0)
    assert result.iterations == 2
    assert not result.converged
    assert len(result.loss_history) == 2


def test_szmidt_kacprzyk_distance_and_no_prior_are_options() -> None:
    rng = np.random.default_rng(2)
    mu = rng.uniform(0, 0.5, (30, 2, 4))
    nu = rng.uniform(0, 0.5, (30, 2, 4))
    a = weights.iterative_consensus_weights(mu, nu, distance="szmidt_kacprzyk", chi2_prior=False)
    b = weights.iterative_consensus_weights(mu, nu)
    assert a.weight.sum() == pytest.approx(1.0)
    # Every annotator judged every item, so the χ² prior is the same for all and cancels.
    assert not np.allclose(a.weight, b.weight)
    c = weights.iterative_consensus_weights(mu, nu, chi2_prior=False)
    np.testing.assert_allclose(b.weight, c.weight, rtol=1e-9)
