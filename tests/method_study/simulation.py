"""Does the crossover design recover a method effect that exists for some annotators only? A seeded simulation.

Run it with ``python -m tests.method_study.simulation [--runs 200]``; the test module runs fewer runs and asserts on
them. Each run draws a fresh population of annotators and labels, then estimates the effect of IFS over binary
labels on agreement with gold in three ways:

- **crossover**: the study's own design (``annotation.method_study.design``: every annotator uses every method on
  different items, Williams order) and the report's own estimator (``aggregation.maths.method_comparison``: the paired
  within-annotator difference with its t interval over annotators);
- **between groups, unequal**: one group per method, as in the paper's evaluation, recruited separately, so the
  groups differ in size and in skill (the IFS group is on average ``group_skill_gap`` more accurate before any method
  effect); a Welch interval on the per-annotator accuracies;
- **between groups, randomised**: the same with groups drawn at random from one pool (for reference).

The truth: an annotator's chance of agreeing with gold is their own base skill, plus ``effect`` with IFS if they are
one of the ``responder_share`` of annotators for whom IFS helps (nobody else gains), minus a fatigue drift with
position in the session. The estimand is the population mean gain, ``effect × responder_share``.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from aggregation.maths.intervals import t_quantile
from aggregation.maths.method_comparison import Labels, paired_differences, per_annotator_figures
from annotation.method_study.design import design_build

METHODS = ("binary", "likert", "ifs")
BINARY, IFS = 0, 2


@dataclass(frozen=True)
class Scenario:
    annotators: int = 24  # a multiple of 6 (the Williams design of three methods has six rows)
    items: int = 480
    block_size: int = 20
    effect: float = 0.2  # gain in P(agree with gold) with IFS, for responders only
    responder_share: float = 0.5
    fatigue_per_item: float = 0.002
    base_low: float = 0.55
    base_high: float = 0.78
    # Between groups: group sizes (binary, IFS) and the IFS group's head start in skill.
    group_sizes: tuple[int, int] = (10, 14)
    group_skill_gap: float = 0.08

    @property
    def truth(self) -> float:
        return self.effect * self.responder_share


@dataclass(frozen=True)
class Outcome:
    value: float
    low: float
    high: float

    def covers(self, truth: float) -> bool:
        return self.low <= truth <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low


def _signed(rng: np.random.Generator, gold: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """A clear preference (|s| past the tie band) on gold's side when correct, on the other side otherwise."""
    strength = rng.uniform(0.3, 1.0, size=gold.size)
    return np.where(correct, gold, -gold) * strength


def _p_correct(base: np.ndarray, responder: np.ndarray, method: np.ndarray, position: np.ndarray, s: Scenario):
    return base + s.effect * responder * (method == IFS) - s.fatigue_per_item * position


def crossover_run(seed: int, s: Scenario) -> Outcome:
    rng = np.random.default_rng(seed)
    base = rng.uniform(s.base_low, s.base_high, size=s.annotators)
    responder = (rng.random(s.annotators) < s.responder_share).astype(float)
    gold_of = rng.choice([-1.0, 1.0], size=s.items)
    cells = design_build(
        n_methods=len(METHODS),
        n_annotators=s.annotators,
        item_ids=list(range(s.items)),
        block_size=s.block_size,
        seed=seed,
    )
    annotator = np.array([c.annotator for c in cells])
    item = np.array([c.item for c in cells])
    method = np.array([c.method for c in cells])
    position = np.array([c.sequence for c in cells], dtype=float)
    p = _p_correct(base[annotator], responder[annotator], method, position, s)
    correct = rng.random(p.size) < p
    gold = gold_of[item]
    labels = Labels.from_lists(
        methods=METHODS,
        item=item,
        annotator=annotator,
        method=method,
        position=position,
        seconds=rng.gamma(4.0, 10.0, size=p.size),
        signed=_signed(rng, gold, correct),
        gold=gold,
    )
    row = next(
        r
        for r in paired_differences(labels, per_annotator_figures(labels))
        if r["figure"] == "gold_agreement" and (r["first"], r["second"]) == ("binary", "ifs")
    )
    return Outcome(value=row["value"], low=row["ci"][0], high=row["ci"][1])


def _welch(a: np.ndarray, b: np.ndarray) -> Outcome:
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = t_quantile(0.95, max(1, math.floor(df))) * math.sqrt(va + vb)
    value = float(b.mean() - a.mean())
    return Outcome(value=value, low=value - half, high=value + half)


def between_groups_run(seed: int, s: Scenario, *, unequal: bool) -> Outcome:
    """One group labels everything with binary, the other with IFS; ``items_each`` items per person, as many labels
    per person as in the crossover's two blocks compared."""
    rng = np.random.default_rng(seed + 1_000_003)
    items_each = 2 * s.block_size
    accuracies = []
    for group, size in zip((BINARY, IFS), s.group_sizes, strict=True):
        gap = s.group_skill_gap if (unequal and group == IFS) else 0.0
        base = rng.uniform(s.base_low, s.base_high, size=size) + gap
        responder = (rng.random(size) < s.responder_share).astype(float)
        position = np.arange(items_each, dtype=float)
        p = _p_correct(base[:, None], responder[:, None], np.full((1, items_each), group), position[None, :], s)
        accuracies.append((rng.random(p.shape) < p).mean(axis=1))
    return _welch(accuracies[0], accuracies[1])


def summarise(outcomes: list[Outcome], truth: float) -> dict[str, float]:
    return {
        "coverage": float(np.mean([o.covers(truth) for o in outcomes])),
        "mean_estimate": float(np.mean([o.value for o in outcomes])),
        "mean_width": float(np.mean([o.width for o in outcomes])),
        "excludes_zero": float(np.mean([o.low > 0 for o in outcomes])),
    }


def simulate(runs: int, s: Scenario | None = None, first_seed: int = 0) -> dict[str, dict[str, float]]:
    s = s or Scenario()
    seeds = range(first_seed, first_seed + runs)
    equal = Scenario(**{**s.__dict__, "group_sizes": (12, 12)})
    return {
        "crossover": summarise([crossover_run(seed, s) for seed in seeds], s.truth),
        "between groups, unequal": summarise([between_groups_run(seed, s, unequal=True) for seed in seeds], s.truth),
        "between groups, randomised": summarise(
            [between_groups_run(seed, equal, unequal=False) for seed in seeds], s.truth
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    options = parser.parse_args()
    s = Scenario()
    results = simulate(options.runs, s, options.first_seed)
    print(
        f"{options.runs} runs; true gain of IFS over binary in agreement with gold: {s.truth:.3f} "
        f"({s.effect:.2f} for {s.responder_share:.0%} of annotators, 0 for the rest)"
    )
    print(f"{'design':<28}{'coverage':>10}{'mean est.':>11}{'mean width':>12}{'excl. 0':>9}")
    for name, row in results.items():
        print(
            f"{name:<28}{row['coverage']:>10.3f}{row['mean_estimate']:>11.3f}{row['mean_width']:>12.3f}"
            f"{row['excludes_zero']:>9.3f}"
        )


if __name__ == "__main__":
    main()
