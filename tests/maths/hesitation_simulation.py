"""Known-truth simulation of hesitation calibration (aggregation.maths.hesitation_calibration).

A project of 120 items, each labelled by 3 of 6 people. Items have a difficulty u ~ U(0, 0.4) that everyone feels.
A *calibrated* person's hesitation on an item is π = clip(0.1 + 0.8·u + N(0, 0.05²)), and their chance of
disagreeing with the others rises with it, P(d = 1) = 0.05 + 0.6·π; a person with a *habit* states π ~ U(0.2, 0.4)
whatever the item, and disagrees with chance 0.05 + 0.6·u (difficulty still matters, their π says nothing of it).
Truth: the population least-squares slope of d on π, exactly 0.6 for the calibrated person (E[d | π] is linear in
π) and 0 for the habit (π is drawn independently of everything else).

``.venv/bin/python -m tests.maths.hesitation_simulation --runs 1000`` prints the coverage of the slope's interval
and how often each kind of person is found to predict disagreement.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from aggregation.maths import hesitation_calibration as hc


def _labels(rng: np.random.Generator, items: int, habit: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u = rng.uniform(0.0, 0.4, items)
    per_item = 3
    item = np.repeat(np.arange(items), per_item)
    uu = u[item]
    if habit:
        pi = rng.uniform(0.2, 0.4, item.size)
        p = 0.05 + 0.6 * uu
    else:
        pi = np.clip(0.1 + 0.8 * uu + rng.normal(0, 0.05, item.size), 0, 1)
        p = 0.05 + 0.6 * pi
    d = (rng.random(item.size) < p).astype(np.float64)
    return pi, d, item


def true_slope(habit: bool) -> float:
    return 0.0 if habit else 0.6


def run(seed: int, r: int, habit: bool, items: int = 120) -> dict[str, float]:
    rng = np.random.default_rng([seed, r, 21 if habit else 22])
    pi, d, item = _labels(rng, items, habit)
    est = hc.hesitation_slope(pi, d, item)
    assert est.ci is not None
    truth = true_slope(habit)
    return {"covers": float(est.ci[0] <= truth <= est.ci[1]), "predicts": float(est.predicts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.runs} runs, seed {args.seed}; true slopes {true_slope(False):.3f} and {true_slope(True):.3f}")
    for habit in (False, True):
        rows = [run(args.seed, r, habit) for r in range(args.runs)]
        for key in ("covers", "predicts"):
            value = float(np.mean([row[key] for row in rows]))
            half = 1.96 * math.sqrt(value * (1 - value) / args.runs)
            print(f"{'habit' if habit else 'calibrated':11s} {key:9s} {value:.4f} (±{half:.4f})")


if __name__ == "__main__":
    main()
