"""The closed forms behind the weights (own − mean of others = m/(m−1)·(own − mean of all), and its weighted
version for the iterative consensus) give what a loop over annotators and their others gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aggregation.maths import weights


def sk(a: tuple[float, float], b: tuple[float, float]) -> float:
    d_mu, d_nu = a[0] - b[0], a[1] - b[1]
    return math.sqrt(0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2))


def random_judgments(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (30, 2, 2, 5)
    mu = rng.integers(0, 1001, shape) / 1000
    nu = np.floor(rng.random(shape) * (1000 - mu * 1000)) / 1000
    mask = rng.random(shape) < 0.6
    return mu, nu, mask


@pytest.mark.parametrize("seed", range(4))
def test_leave_one_out_agreement_matches_a_loop(seed: int) -> None:
    mu, nu, mask = random_judgments(seed)
    n_annotators = mu.shape[-1]
    totals = [0.0] * n_annotators
    counts = [0] * n_annotators
    for cell in np.ndindex(mu.shape[:-1]):
        for a in range(n_annotators):
            others = [b for b in range(n_annotators) if b != a and mask[cell][b]]
            if not mask[cell][a] or not others:
                continue
            centre = (float(np.mean(mu[cell][others])), float(np.mean(nu[cell][others])))
            totals[a] += sk((mu[cell][a], nu[cell][a]), centre)
            counts[a] += 1
    expected = [1 - t / c if c else math.nan for t, c in zip(totals, counts, strict=True)]
    result = weights.leave_one_out_agreement(np.where(mask, mu, np.nan), nu, mask)
    np.testing.assert_allclose(result, expected, atol=1e-12)


@pytest.mark.parametrize("prior_items", [0, 10])
@pytest.mark.parametrize("distance", ["euclidean", "szmidt_kacprzyk"])
@pytest.mark.parametrize("seed", range(3))
def test_consensus_of_the_others_matches_a_loop(seed: int, distance: str, prior_items: int) -> None:
    """Plain loop of the exclude-self update: each annotator against the weighted mean of the others, their distance
    sum pooled with ``prior_items`` pseudo-items at the mean distance per item with company."""
    mu, nu, mask = random_judgments(seed)
    n_items, n_annotators = mu.shape[0], mu.shape[-1]
    on_item = mask.reshape(n_items, -1, n_annotators).any(axis=1)
    judged = on_item.sum(axis=0)
    with_company = sum(1 for i in range(n_items) for a in range(n_annotators) if on_item[i, a] and on_item[i].sum() > 1)
    prior = np.array([weights.chi2_isf(0.025, int(k) + prior_items) for k in judged])
    reliability = np.ones(n_annotators)
    consensus_before = None
    for _ in range(100):
        totals = np.zeros(n_annotators)
        for cell in np.ndindex(mu.shape[:-1]):
            for a in range(n_annotators):
                others = [b for b in range(n_annotators) if b != a and mask[cell][b]]
                if not mask[cell][a] or not others:
                    continue
                r = reliability[others]
                d_mu = mu[cell][a] - float(np.dot(r, mu[cell][others]) / r.sum())
                d_nu = nu[cell][a] - float(np.dot(r, nu[cell][others]) / r.sum())
                squared = d_mu**2 + d_nu**2
                if distance == "szmidt_kacprzyk":
                    squared = 0.5 * (squared + (d_mu + d_nu) ** 2)
                totals[a] += squared
        pooled = totals.sum() / with_company
        reliability = prior / np.maximum(totals + prior_items * pooled, 1e-5)
        consensus = np.array(
            [
                np.dot(reliability[mask[cell]], mu[cell][mask[cell]]) / reliability[mask[cell]].sum()
                for cell in np.ndindex(mu.shape[:-1])
                if mask[cell].any()
            ]
        )
        if consensus_before is not None:
            change = np.sum((consensus - consensus_before) ** 2)
            if change / np.sum(consensus**2) < 1e-12:
                break
        consensus_before = consensus
    result = weights.iterative_consensus_weights(
        mu,
        nu,
        mask,
        distance=distance,  # type: ignore[arg-type]
        tol=1e-14,
        prior_items=prior_items,
    )
    assert result.converged
    np.testing.assert_allclose(result.weight, reliability / reliability.sum(), rtol=1e-6)
