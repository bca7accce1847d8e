"""Coverage of every reported 95 % interval when a figure rests on 20 items: the small-project regime.

The projects are those of :mod:`tests.maths.interval_simulation` (items of known type, 2-5 correlated labels per
item, an LLM of known accuracy, copying on shown items) with the sizes fixed rather than drawn: 40 items, the first
20 blind and the other 20 shown, gold on the 20 blind items. So blind agreement, shown agreement, model vs gold and
each human-human figure rest on exactly 20 items, the anchoring gap on 20 + 20, and the cross-mode figures
(pairwise shares, Krippendorff's α) are computed on the 20 blind items. Two agreement levels: moderate (blind
≈ 0.66) and near the handoff threshold (blind ≈ 0.91), where the proportion intervals over-covered.

``.venv/bin/python -m tests.maths.small_project_simulation --runs 1000`` prints the coverage table
(docs/guides/conclusions.md keeps it); ``--items`` changes the 20.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import numpy as np

from tests.maths.interval_simulation import SCENARIOS, Simulation, coverage, reported_intervals, simulate, truths

ITEMS = 20


def simulate_fixed(scenario_name: str, runs: int, items: int = ITEMS, seed: int = 0) -> Simulation:
    """``runs`` projects of 2 × ``items`` items: the first half blind (with gold), the second shown."""
    base = SCENARIOS[scenario_name]
    scenario = dataclasses.replace(
        base, n_projects=runs, items=(2 * items, 2 * items), gold_rate=1.0, seed=base.seed * 1000 + items + seed
    )
    sim = simulate(scenario)
    # Replace the random blind draw by a fixed half, and redraw copying on the shown half to match.
    rng = np.random.default_rng(scenario.seed + 1)
    blind = np.zeros_like(sim.blind)
    blind[:, :items] = True
    copies = (~blind)[..., None] & (rng.random(sim.human.shape) < scenario.copy)
    human = np.where(copies, sim.llm[..., None], sim.own)
    gold = np.where(blind, sim.gold, 0.0)
    return dataclasses.replace(sim, blind=blind, human=human, gold=gold)


def table(scenario_name: str, runs: int, items: int = ITEMS, seed: int = 0) -> dict[str, Any]:
    sim = simulate_fixed(scenario_name, runs, items, seed)
    return coverage(reported_intervals(sim, cross_mode_items=items), truths(sim.scenario))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--items", type=int, default=ITEMS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in ("moderate", "near_threshold"):
        truth = truths(SCENARIOS[name])
        print(f"{name}: {args.runs} projects, {args.items} items per figure")
        for figure, row in table(name, args.runs, args.items, args.seed).items():
            print(
                f"  {figure:24s} truth {truth[figure]:.3f}  coverage {row['coverage']:.3f}"
                f"  reported {row['reported']}/{row['of']}  mean width {row['mean_width']:.3f}"
            )


if __name__ == "__main__":
    main()
