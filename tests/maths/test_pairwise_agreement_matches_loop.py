"""Pairwise percent agreement pools pairs over items, treats a tie as its own answer, and without ties keeps only
pairs where neither annotator chose a tie: checked against a plain loop over pairs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aggregation.maths import agreement


def agreement_by_loop(labels: np.ndarray, mask: np.ndarray, with_ties: bool, tie: float) -> tuple[float, int]:
    agreeing = pairs = 0
    for unit in range(labels.shape[0]):
        given = [labels[unit, c] for c in range(labels.shape[1]) if mask[unit, c]]
        for a, b in itertools.combinations(given, 2):
            if not with_ties and (a == tie or b == tie):
                continue
            pairs += 1
            agreeing += a == b
    return agreeing / pairs, pairs


def test_small_example_by_hand() -> None:
    labels = np.array([[1, 1, -1], [1, 0, 0], [-1, -1, 5]], dtype=float)
    mask = np.array([[True, True, True], [True, True, True], [True, True, False]])
    with_ties = agreement.pairwise_agreement(labels, mask)
    # Item 0: (1,1) agree, (1,−1) ×2 differ; item 1: (0,0) agree, (1,0) ×2 differ; item 2: (−1,−1) agree.
    assert (with_ties.value, with_ties.n) == (pytest.approx(3 / 7), 7)
    without_ties = agreement.pairwise_agreement(labels, mask, with_ties=False)
    # Ties (0) dropped: item 0 keeps 3 pairs (1 agrees), item 1 keeps none, item 2 keeps 1 agreeing pair.
    assert (without_ties.value, without_ties.n) == (pytest.approx(2 / 4), 4)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("with_ties", [True, False])
def test_random_matrices_match_the_loop(seed: int, with_ties: bool) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(-1, 2, (int(rng.integers(3, 50)), int(rng.integers(3, 8)))).astype(float)
    mask = rng.random(labels.shape) < 0.7
    mask[0, :3] = True
    labels[0, :3] = [1.0, 1.0, -1.0]
    result = agreement.pairwise_agreement(labels, mask, with_ties=with_ties)
    expected, n_pairs = agreement_by_loop(labels, mask, with_ties, tie=0.0)
    assert result.n == n_pairs
    assert result.value == pytest.approx(expected, abs=1e-12)


def test_no_pairs_gives_no_value() -> None:
    result = agreement.pairwise_agreement(np.array([[1.0, np.nan], [0.0, np.nan]]))
    assert result.value is None
    assert result.n == 0
    assert result.as_dict() == {"value": None, "n": 0, "ci": None}


def test_interval_over_items_is_added_on_request() -> None:
    rng = np.random.default_rng(3)
    labels = np.sign(rng.normal(0.3, 1.0, (300, 4)))
    assert agreement.pairwise_agreement(labels).ci is None
    result = agreement.pairwise_agreement(labels, interval=True)
    assert result.ci is not None
    assert result.value is not None
    low, high = result.ci
    assert low < result.value < high
    assert high - low < 0.15
    assert agreement.pairwise_agreement(labels, interval=True).ci == result.ci
