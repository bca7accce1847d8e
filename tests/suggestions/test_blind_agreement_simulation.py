"""Measured blind agreement and the anchoring gap recover the known behaviour of simulated annotators."""

from __future__ import annotations

import pytest

from aggregation.models import ProjectAggregate
from suggestions.figures import suggestion_figures_recompute
from tests.suggestions.simulation import simulate, truth

pytestmark = pytest.mark.django_db


def _report(label: str, figures: dict, expected) -> None:
    blind, shown, gap = figures["blind"]["agreement"], figures["shown"]["agreement"], figures["anchoring_gap"]
    print(
        f"\n{label}: blind true {expected.blind_agreement:.3f} measured {blind['value']:.3f} {blind['ci']}"
        f" n={blind['n']}"
        f" | shown true {expected.shown_agreement:.3f} measured {shown['value']:.3f} {shown['ci']} n={shown['n']}"
        f" | gap true {expected.gap:.3f} measured {gap['value']:.3f} {gap['ci']}"
    )


def test_blind_agreement_lands_on_the_true_value_and_the_gap_shows_copying():
    project = simulate(copy=0.5, seed=7)
    expected = truth(llm_accuracy=0.7, human_accuracy=0.9, copy=0.5)
    figures = suggestion_figures_recompute(project_id=project.pk)
    _report("copy q=0.5", figures, expected)

    blind = figures["blind"]["agreement"]
    low, high = blind["ci"]
    assert blind["n"] >= 200
    assert low <= expected.blind_agreement <= high
    assert abs(blind["value"] - expected.blind_agreement) < 0.06

    gap = figures["anchoring_gap"]
    assert gap["ci"][0] > 0, "copying half the time must show as a gap whose interval is above 0"
    assert gap["ci"][0] <= expected.gap <= gap["ci"][1]
    assert ProjectAggregate.objects.get(project=project).suggestions["anchoring_gap"]["value"] == gap["value"]


def test_without_copying_the_gap_interval_includes_zero():
    project = simulate(copy=0.0, seed=11)
    expected = truth(llm_accuracy=0.7, human_accuracy=0.9, copy=0.0)
    figures = suggestion_figures_recompute(project_id=project.pk)
    _report("copy q=0", figures, expected)

    low, high = figures["anchoring_gap"]["ci"]
    assert low <= 0 <= high
    blind_low, blind_high = figures["blind"]["agreement"]["ci"]
    assert blind_low <= expected.blind_agreement <= blind_high


def test_accept_usage_and_human_human_agreement_are_reported():
    project = simulate(copy=0.5, seed=3, items=120)
    figures = suggestion_figures_recompute(project_id=project.pk)
    shown_n = figures["shown"]["agreement"]["n"]
    assert figures["accept"]["count"] > 0
    assert figures["accept"]["rate"] == pytest.approx(figures["accept"]["count"] / shown_n)
    # Annotators right 90 % of the time on their own agree with each other about 0.9² + 0.1² = 0.82 of the time.
    human_blind = figures["human_human"]["blind"]
    assert human_blind["n"] > 0
    assert human_blind["ci"][0] <= 0.82 <= human_blind["ci"][1]
    assert set(figures["per_annotator"]) == {str(a) for a in project.memberships.values_list("user_id", flat=True)}
