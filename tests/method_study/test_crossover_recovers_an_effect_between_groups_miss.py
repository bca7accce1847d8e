"""The simulation (tests/method_study/simulation.py) at a CI-sized number of runs: the crossover design and the
report's paired estimator recover an IFS gain that exists for half of the annotators only, with intervals that
cover it; one group per method, recruited separately, does not."""

from __future__ import annotations

from tests.method_study.simulation import Scenario, simulate

RUNS = 40


def test_crossover_covers_the_true_gain_and_unequal_groups_do_not():
    scenario = Scenario()
    results = simulate(RUNS, scenario)
    crossover, unequal = results["crossover"], results["between groups, unequal"]
    assert abs(crossover["mean_estimate"] - scenario.truth) < 0.02
    assert crossover["coverage"] >= 0.85
    # Most runs also tell the gain from nothing.
    assert crossover["excludes_zero"] >= 0.5
    # Groups that differ in skill add that difference to the method's effect, and their intervals miss.
    assert unequal["mean_estimate"] - scenario.truth > 0.05
    assert unequal["coverage"] <= crossover["coverage"] - 0.15


def test_with_no_gain_the_crossover_finds_none():
    scenario = Scenario(effect=0.0)
    crossover = simulate(RUNS, scenario, first_seed=500)["crossover"]
    assert abs(crossover["mean_estimate"]) < 0.02
    assert crossover["coverage"] >= 0.85
    assert crossover["excludes_zero"] <= 0.15
