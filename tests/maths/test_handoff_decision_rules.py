"""Handoff needs enough blind comparisons and blind agreement at the threshold: by the point estimate, or by the
interval's lower bound under the stricter rule; the decision explains itself."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import comparisons
from aggregation.maths.agreement import Estimate


def test_too_few_blind_comparisons() -> None:
    blind = comparisons.agreement_estimate([True] * 12)
    decision = comparisons.handoff_decision(blind, threshold=0.9, minimum=20)
    assert not decision.eligible
    assert decision.more_needed == 8
    assert "8 more needed" in decision.reason


def test_point_rule_fires_at_the_threshold() -> None:
    blind = comparisons.agreement_estimate([True] * 27 + [False] * 3)  # 0.9 exactly
    decision = comparisons.handoff_decision(blind, threshold=0.9, minimum=20)
    assert decision.eligible
    assert decision.rule == "point"
    assert "reaches" in decision.reason
    assert decision.as_dict()["blind"]["n"] == 30


def test_point_rule_below_the_threshold() -> None:
    blind = comparisons.agreement_estimate([True] * 26 + [False] * 4)
    assert not comparisons.handoff_decision(blind, threshold=0.9, minimum=20).eligible


def test_lower_bound_rule_is_stricter() -> None:
    blind = comparisons.agreement_estimate([True] * 28 + [False] * 2)  # 0.933, Wilson low ≈ 0.787
    assert comparisons.handoff_decision(blind, 0.9, 20, rule="point").eligible
    strict = comparisons.handoff_decision(blind, 0.9, 20, rule="lower_bound")
    assert not strict.eligible
    assert strict.rule == "lower_bound"
    assert "lower bound" in strict.reason


def test_lower_bound_rule_fires_with_plenty_of_evidence() -> None:
    blind = comparisons.agreement_estimate([True] * 590 + [False] * 10)  # 0.983, Wilson low ≈ 0.970
    decision = comparisons.handoff_decision(blind, 0.95, 20, rule="lower_bound")
    assert decision.eligible
    assert "lower bound" in decision.reason


def test_lower_bound_rule_without_an_interval_does_not_fire() -> None:
    decision = comparisons.handoff_decision(Estimate(value=0.99, n=50, ci=None), 0.9, 20, rule="lower_bound")
    assert not decision.eligible


def test_lower_bound_rule_counts_items_not_labels() -> None:
    """Three identical labels of one item are one piece of evidence: the clustered lower bound is lower, and a
    threshold the label-level bound would pass is not reached."""
    per_item = np.array([True] * 28 + [False] * 2)
    matches, items = np.repeat(per_item, 3), np.repeat(np.arange(30), 3)
    clustered = comparisons.agreement_estimate(matches, items)
    as_if_independent = comparisons.agreement_estimate(matches)
    one_per_item = comparisons.agreement_estimate(per_item, np.arange(30))
    assert clustered.value == as_if_independent.value
    assert clustered.ci is not None
    assert as_if_independent.ci is not None
    assert one_per_item.ci is not None
    # Identical copies add nothing: the clustered interval is (about) the one of one label per item.
    assert clustered.ci[0] == pytest.approx(one_per_item.ci[0], abs=0.02)
    assert clustered.ci[0] < as_if_independent.ci[0] - 0.04
    threshold = (clustered.ci[0] + as_if_independent.ci[0]) / 2
    assert comparisons.handoff_decision(as_if_independent, threshold, 20, rule="lower_bound").eligible
    assert not comparisons.handoff_decision(clustered, threshold, 20, rule="lower_bound").eligible


def test_a_withheld_blind_figure_never_hands_off() -> None:
    decision = comparisons.handoff_decision(Estimate(value=None, n=3), threshold=0.5, minimum=2)
    assert not decision.eligible
    assert "not reported yet" in decision.reason
