"""The contracts beside the handoff threshold keep their guarantees on known truths (tests/maths/contract_simulation.py;
the 1,000-run table is in docs/guides/contracts.md): selective risk certifies a threshold whose true risk exceeds the
target at most δ of the time, the alternative annotator test passes a good model and not one at its null's boundary,
the distributional contract passes a model at the people's mean and seldom one at the margin, and the budget
forecast's labels reach the forecast share about half of the time. Small runs, bounds wide enough for their
Monte-Carlo error and narrow enough that a broken contract fails."""

from __future__ import annotations

import numpy as np
import pytest

from tests.maths import contract_simulation as sim

pytestmark = [pytest.mark.slow]


def _mean(rows: list[dict[str, float]], key: str) -> float:
    return float(np.mean([row[key] for row in rows]))


def test_selective_risk_violates_its_target_at_most_delta_of_the_time() -> None:
    flat = [sim.selective_run(2, r, items=1000, flat=0.101) for r in range(60)]
    assert _mean(flat, "violation") <= 0.10  # every certification here is a violation; δ = 0.05
    real = [sim.selective_run(2, r, items=1000) for r in range(60)]
    assert _mean(real, "certified") > 0.4  # and it does certify when the model is good enough
    assert _mean(real, "violation") <= 0.10


def test_alt_test_passes_a_good_model_and_not_one_at_the_boundary() -> None:
    good = [sim.alt_run(2, r, 0.9) for r in range(30)]
    assert _mean(good, "passes") > 0.9
    boundary = [sim.alt_run(2, r, sim.boundary_accuracy()) for r in range(60)]
    assert _mean(boundary, "passes") <= 0.10


def test_distributional_passes_the_truth_and_seldom_a_model_at_the_margin() -> None:
    assert _mean([sim.distributional_run(2, r, 0.0) for r in range(30)], "passes") > 0.9
    assert _mean([sim.distributional_run(2, r, sim.boundary_shift()) for r in range(80)], "passes") <= 0.12


def test_the_budget_forecast_is_a_median_not_a_promise() -> None:
    at_forecast = _mean([sim.budget_run(2, r) for r in range(60)], "reaches_forecast")
    assert 0.25 <= at_forecast <= 0.85
    assert _mean([sim.budget_run(2, r, fraction=0.25) for r in range(40)], "reaches_forecast") <= 0.15
