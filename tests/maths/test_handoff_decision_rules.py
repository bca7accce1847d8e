"""Handoff needs enough blind comparisons and blind agreement at the threshold: by the point estimate, or by the
interval's lower bound under the stricter rule; the decision explains itself."""

from __future__ import annotations

from aggregation import comparisons
from aggregation.agreement import Estimate


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
