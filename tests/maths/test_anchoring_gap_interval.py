"""The anchoring gap (shown − blind agreement) is withheld below 5 comparisons a side with a hint of how many more
are needed, and otherwise carries an interval over items (MOVER from the two clustered proportion intervals)."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import comparisons


def test_withheld_with_fewer_than_five_on_a_side() -> None:
    gap = comparisons.anchoring_gap([True] * 9, list(range(9)), [True, False, True], [20, 21, 22])
    assert gap.value is None
    assert gap.ci is None
    assert gap.more_needed == {"shown": 0, "blind": 2}
    assert gap.hint is not None
    assert "2 more blind" in gap.hint
    # The sides themselves are still reported.
    assert gap.shown.value == 1.0
    assert gap.blind.n == 3
    assert gap.as_dict()["value"] is None


def test_reported_from_five_on_each_side() -> None:
    gap = comparisons.anchoring_gap([True] * 5, range(5), [True, False, True, True, False], range(10, 15))
    assert gap.value == pytest.approx(1.0 - 0.6)
    assert gap.hint is None
    assert gap.more_needed == {"shown": 0, "blind": 0}
    assert gap.n == 10


def synthetic(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shown_items = rng.integers(0, 150, 400)
    blind_items = rng.integers(150, 200, 120)
    return rng.random(400) < 0.9, shown_items, rng.random(120) < 0.7, blind_items


def test_interval_is_the_mover_interval_of_the_per_item_counts() -> None:
    shown, shown_items, blind, blind_items = synthetic()
    gap = comparisons.anchoring_gap(shown, shown_items, blind, blind_items)
    assert comparisons.anchoring_gap(shown, shown_items, blind, blind_items) == gap
    # The two sides share no item here, so MOVER is Newcombe's hybrid interval from the two side intervals.
    assert gap.shown.ci is not None
    assert gap.blind.ci is not None
    assert gap.ci is not None
    d = shown.mean() - blind.mean()
    (l1, u1), (l2, u2) = gap.shown.ci, gap.blind.ci
    p1, p2 = shown.mean(), blind.mean()
    assert gap.ci[0] == pytest.approx(d - np.hypot(p1 - l1, u2 - p2))
    assert gap.ci[1] == pytest.approx(d + np.hypot(u1 - p1, p2 - l2))


def test_interval_surrounds_the_gap_and_is_plausibly_wide() -> None:
    shown, shown_items, blind, blind_items = synthetic()
    gap = comparisons.anchoring_gap(shown, shown_items, blind, blind_items)
    assert gap.value == pytest.approx(shown.mean() - blind.mean())
    assert gap.ci is not None
    assert gap.value is not None
    low, high = gap.ci
    assert low < gap.value < high
    # Roughly the unclustered normal width for a difference of proportions (items hold few labels each).
    p1, p2 = shown.mean(), blind.mean()
    normal_half_width = 1.96 * np.sqrt(p1 * (1 - p1) / shown.size + p2 * (1 - p2) / blind.size)
    assert (high - low) / 2 == pytest.approx(normal_half_width, rel=0.35)


def test_clustered_labels_widen_the_interval() -> None:
    """Five identical labels per item are one observation, not five: an interval over items must see that."""
    rng = np.random.default_rng(5)
    shown_per_item = rng.random(40) < 0.8
    blind_per_item = rng.random(40) < 0.6
    clustered = comparisons.anchoring_gap(
        np.repeat(shown_per_item, 5),
        np.repeat(np.arange(40), 5),
        np.repeat(blind_per_item, 5),
        np.repeat(np.arange(40, 80), 5),
    )
    independent = comparisons.anchoring_gap(
        np.repeat(shown_per_item, 5),
        np.arange(200),
        np.repeat(blind_per_item, 5),
        np.arange(200, 400),
    )
    assert clustered.value == pytest.approx(independent.value)
    assert clustered.ci is not None
    assert independent.ci is not None
    assert clustered.ci[1] - clustered.ci[0] > 1.8 * (independent.ci[1] - independent.ci[0])


def test_items_with_both_shown_and_blind_labels_keep_their_pairing() -> None:
    rng = np.random.default_rng(8)
    items = np.arange(60)
    blind = rng.random(60) < 0.6
    # Shown labels that mostly repeat the same item's blind label: positively correlated sides, so the difference
    # is known more precisely than if the sides were independent.
    shown = np.where(rng.random(60) < 0.8, blind, rng.random(60) < 0.9)
    paired = comparisons.anchoring_gap(shown, items, blind, items)
    apart = comparisons.anchoring_gap(shown, items, blind, items + 100)
    assert paired.ci is not None
    assert apart.ci is not None
    assert paired.value is not None
    assert paired.ci[0] < paired.value < paired.ci[1]
    assert paired.ci[1] - paired.ci[0] < 0.8 * (apart.ci[1] - apart.ci[0])


def test_mismatched_lengths_are_rejected() -> None:
    with pytest.raises(ValueError, match="one entry per comparison"):
        comparisons.anchoring_gap([True, False], [1], [True], [2])
