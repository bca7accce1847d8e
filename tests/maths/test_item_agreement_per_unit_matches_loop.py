"""Per-item pairwise agreement (the item figure of binary and Likert projects): the share of an item's pairs of
annotators with the same label, NaN below two labels, checked against a plain loop; its pooled form is the
project's pairwise agreement."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aggregation.maths import agreement


def per_item_by_loop(labels: np.ndarray, mask: np.ndarray) -> list[float]:
    shares = []
    for unit in range(labels.shape[0]):
        given_labels = [labels[unit, c] for c in range(labels.shape[1]) if mask[unit, c]]
        pairs = list(itertools.combinations(given_labels, 2))
        shares.append(sum(a == b for a, b in pairs) / len(pairs) if pairs else float("nan"))
    return shares


def test_small_example_by_hand() -> None:
    labels = np.array([[0, 0, 1], [1, -1, np.nan], [0, np.nan, np.nan]])
    result = agreement.pairwise_agreement_per_unit(labels, ~np.isnan(labels))
    # Item 0: one agreeing pair of three; item 1: a choice against a tie; item 2: one label, no pair.
    np.testing.assert_allclose(result, [1 / 3, 0.0, np.nan])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda units: st.integers(1, 6).flatmap(
            lambda coders: st.tuples(
                arrays(np.int64, (units, coders), elements=st.integers(-1, 2)),
                arrays(np.bool_, (units, coders)),
            )
        )
    )
)
def test_matches_the_loop(case: tuple[np.ndarray, np.ndarray]) -> None:
    labels, mask = case
    labels = labels.astype(np.float64)
    result = agreement.pairwise_agreement_per_unit(labels, mask)
    np.testing.assert_allclose(result, per_item_by_loop(labels, mask), atol=1e-12)
    pooled = agreement.pairwise_agreement(labels, mask)
    counts = mask.sum(axis=1)
    pairs = counts * (counts - 1) / 2
    if pairs.sum():
        weighted = np.nansum(result * pairs) / pairs.sum()
        assert pooled.value is not None
        assert abs(pooled.value - weighted) < 1e-12
