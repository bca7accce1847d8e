"""IFS agreement uses the corrected normalisation 2/(k(k−1)): 0 at maximum disagreement, 1 at unanimity, equal to
a plain double loop over annotator pairs (with missing judgments), and not the paper's Eq. (11) floor of 0.5."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aggregation.maths import ifs


def sk_distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    d_mu, d_nu = a[0] - b[0], a[1] - b[1]
    d_pi = (1 - a[0] - a[1]) - (1 - b[0] - b[1])
    return float(np.sqrt(0.5 * (d_mu**2 + d_nu**2 + d_pi**2)))


def agreement_by_loop(mu: np.ndarray, nu: np.ndarray, mask: np.ndarray) -> list[float]:
    """Straightforward: per item, per pair of annotators, mean distance over values both gave."""
    n_items, n_annotators = mu.shape[0], mu.shape[-1]
    flat_mu = mu.reshape(n_items, -1, n_annotators)
    flat_nu = nu.reshape(n_items, -1, n_annotators)
    flat_mask = mask.reshape(n_items, -1, n_annotators)
    results = []
    for item in range(n_items):
        pair_distances = []
        for i, j in itertools.combinations(range(n_annotators), 2):
            shared = [
                sk_distance((flat_mu[item, v, i], flat_nu[item, v, i]), (flat_mu[item, v, j], flat_nu[item, v, j]))
                for v in range(flat_mu.shape[1])
                if flat_mask[item, v, i] and flat_mask[item, v, j]
            ]
            if shared:
                pair_distances.append(sum(shared) / len(shared))
        results.append(1 - sum(pair_distances) / len(pair_distances) if pair_distances else float("nan"))
    return results


def test_maximum_disagreement_gives_zero() -> None:
    mu = np.array([[1.0, 0.0]])
    nu = np.array([[0.0, 1.0]])
    assert ifs.ifs_agreement(mu, nu) == pytest.approx([0.0])
    # The paper's Eq. (11) divides by k(k−1) = 2 and would report 1 − 1/2 = 0.5 here.


def test_unanimity_gives_one() -> None:
    mu = np.full((3, 2, 4), 0.35)
    nu = np.full((3, 2, 4), 0.4)
    assert ifs.ifs_agreement(mu, nu) == pytest.approx([1.0, 1.0, 1.0])


def test_three_annotators_closed_form() -> None:
    # Distances: d(A1, A2) = 1, d(A1, A3) = 1, d(A2, A3) = d((0, 1), (0, 0)) = 1 → agreement 0.
    mu = np.array([[1.0, 0.0, 0.0]])
    nu = np.array([[0.0, 1.0, 0.0]])
    assert ifs.ifs_agreement(mu, nu) == pytest.approx([0.0])
    # Two identical, one opposite: mean of (0, 1, 1) = 2/3.
    mu = np.array([[1.0, 1.0, 0.0]])
    nu = np.array([[0.0, 0.0, 1.0]])
    assert ifs.ifs_agreement(mu, nu) == pytest.approx([1 / 3])


@pytest.mark.parametrize("seed", range(5))
def test_matches_a_double_loop_with_missing_judgments(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (25, 2, 3, 6)
    mu = rng.integers(0, 1001, shape) / 1000
    nu = np.floor(rng.random(shape) * (1000 - mu * 1000)) / 1000
    mask = rng.random(shape) < 0.5
    mask[0] = False
    mask[1, ..., 1:] = False  # a single annotator: undefined
    result = ifs.ifs_agreement(np.where(mask, mu, np.nan), np.where(mask, nu, np.nan), mask)
    expected = agreement_by_loop(mu, nu, mask)
    assert np.isnan(result[0])
    assert np.isnan(result[1])
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-12)


def test_compaction_keeps_sparse_projects_exact() -> None:
    """Hundreds of project annotators, three per item: same result as the loop."""
    rng = np.random.default_rng(11)
    n_items, n_annotators = 30, 200
    mu = rng.uniform(0, 0.5, (n_items, 2, n_annotators))
    nu = rng.uniform(0, 0.5, (n_items, 2, n_annotators))
    mask = np.zeros(mu.shape, dtype=bool)
    for item in range(n_items):
        mask[item, :, rng.choice(n_annotators, size=3, replace=False)] = True
    np.testing.assert_allclose(ifs.ifs_agreement(mu, nu, mask), agreement_by_loop(mu, nu, mask), atol=1e-12)
