"""The default consensus weighting (each annotator against the weighted consensus of the *others*, shrunk toward
equal weight) equals a plain loop over cells and annotators that forms the others' consensus explicitly, on
random shapes with missing values (which hold NaN, so nothing absent may leak into a sum)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import weights


def consensus_by_loop(
    mu: np.ndarray, nu: np.ndarray, mask: np.ndarray, *, updates: int, prior_items: int, sk: bool
) -> np.ndarray:
    n_items, n_annotators = mu.shape[0], mu.shape[-1]
    cells = [(i, v) for i in range(n_items) for v in range(int(np.prod(mu.shape[1:-1])))]  # (item, flat value) pairs
    flat = [x.reshape(n_items, -1, n_annotators) for x in (mu, nu, mask)]
    on_item = [[bool(flat[2][i, :, k].any()) for k in range(n_annotators)] for i in range(n_items)]
    judged = [sum(on_item[i][k] for i in range(n_items)) for k in range(n_annotators)]
    with_company = sum(on_item[i][k] for i in range(n_items) for k in range(n_annotators) if sum(on_item[i]) > 1)
    prior = [weights.chi2_isf(0.025, judged[k] + prior_items) if judged[k] else 0.0 for k in range(n_annotators)]

    def reliability_from(beta: list[float]) -> list[float]:
        total = [0.0] * n_annotators
        for i, v in cells:
            present = [k for k in range(n_annotators) if flat[2][i, v, k]]
            for k in present:
                others = [j for j in present if j != k]
                if not others:
                    continue
                weight = sum(beta[j] for j in others)
                c_mu = sum(beta[j] * flat[0][i, v, j] for j in others) / weight
                c_nu = sum(beta[j] * flat[1][i, v, j] for j in others) / weight
                d_mu, d_nu = flat[0][i, v, k] - c_mu, flat[1][i, v, k] - c_nu
                total[k] += 0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2) if sk else d_mu**2 + d_nu**2
        pooled = sum(total) / with_company if with_company else 0.0
        return [prior[k] / max(total[k] + prior_items * pooled, 1e-5) for k in range(n_annotators)]

    beta = [1.0] * n_annotators
    for _ in range(updates + 1):  # the last one from the final consensus, as the function reports it
        beta = reliability_from(beta)
    result = np.array(beta)
    return result / result.sum()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_items=st.integers(2, 7),
    n_criteria=st.integers(1, 2),
    n_annotators=st.integers(2, 5),
    prior_items=st.sampled_from([0, 10]),
    sk=st.booleans(),
)
def test_exclude_self_consensus_matches_the_loop(
    seed: int, n_items: int, n_criteria: int, n_annotators: int, prior_items: int, sk: bool
) -> None:
    rng = np.random.default_rng(seed)
    shape = (n_items, 2, n_criteria, n_annotators)
    mu = rng.integers(0, 1001, shape) / 1000
    nu = np.floor(rng.random(shape) * (1000 - mu * 1000)) / 1000
    mask = rng.random(shape) < 0.75
    mu[~mask] = np.nan
    nu[~mask] = np.nan
    result = weights.iterative_consensus_weights(
        mu, nu, mask, prior_items=prior_items, distance="szmidt_kacprzyk" if sk else "euclidean"
    )
    if not np.isfinite(result.weight).all():
        assert not mask.any() or result.reliability.sum() == 0
        return
    expected = consensus_by_loop(mu, nu, mask, updates=result.iterations, prior_items=prior_items, sk=sk)
    np.testing.assert_allclose(result.weight, expected, rtol=1e-9, atol=1e-12)
