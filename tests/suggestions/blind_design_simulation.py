"""Known-truth projects where calibration oversamples low-confidence items: the pooled "blind" figure of every
unexposed label against the design-based estimate over the fixed random blind sample.

Each project has N items the model would label, half of them high-confidence (the model right 95 % of the time) and
half low-confidence (right 60 %). People label a two-way preference; on item i each is right with probability q_i,
one of a few difficulty levels shared by the item's labels. A label agrees with the model with probability
a_i = q_i when the model is right, 1 − q_i otherwise. The truth is the finite-population mean of a_i over the N items:
how often the model agrees with an unaided person on an item drawn at random.

The fixed random blind sample takes each item with probability ``blind_rate`` (projects.blind: u < rate), and each
sampled item gets ``overlap`` unexposed labels. Then a calibration draw, stratified by confidence, asks
``calibration`` items (``low_share`` of them low-confidence) for two unexposed labels each, as the label engine does.

* old: every unexposed label pooled (the figure blind agreement was before: ``agreement_estimate``), now named
  unaided agreement;
* new: :func:`aggregation.maths.comparisons.design_agreement` over the labels on blind-sample items (calibration
  labels that land on a sampled item count there, as they do in suggestions.figures), each item weighted by 1/π.

Run ``.venv/bin/python -m tests.suggestions.blind_design_simulation --runs 2000`` for the table (docs/guides/
blind-agreement.md keeps it); the test module runs fewer projects and asserts on the same summary.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np

from aggregation.maths.comparisons import agreement_estimate, design_agreement


@dataclass(frozen=True)
class Scenario:
    items: int = 400
    blind_rate: float = 0.2
    overlap: int = 2
    calibration: int = 100
    labels_per_request: int = 2  # suggestions.requests' default labels per drawn item
    low_share: float = 0.67
    model_high: float = 0.95
    model_low: float = 0.60
    human_accuracy: tuple[float, ...] = (1.0, 0.95, 0.85)
    human_accuracy_p: tuple[float, ...] = (0.5, 0.3, 0.2)
    seed: int = 20261205


def project_run(scenario: Scenario, index: int) -> dict[str, Any]:
    """One simulated project: the truth and both figures with their intervals."""
    rng = np.random.default_rng([scenario.seed, index])
    n = scenario.items
    low = np.arange(n) < n // 2
    right = rng.random(n) < np.where(low, scenario.model_low, scenario.model_high)
    q = rng.choice(scenario.human_accuracy, size=n, p=scenario.human_accuracy_p)
    a = np.where(right, q, 1.0 - q)
    truth = float(a.mean())

    sampled = rng.random(n) < scenario.blind_rate
    items = [np.repeat(np.flatnonzero(sampled), scenario.overlap)]
    n_low = round(scenario.calibration * scenario.low_share)
    drawn = np.concatenate(
        [
            rng.choice(np.flatnonzero(low), size=n_low, replace=False),
            rng.choice(np.flatnonzero(~low), size=scenario.calibration - n_low, replace=False),
        ]
    )
    items.append(np.repeat(drawn, scenario.labels_per_request))
    label_items = np.concatenate(items)
    match = rng.random(label_items.size) < a[label_items]

    old = agreement_estimate(match, label_items)
    in_sample = sampled[label_items]
    new = design_agreement(match[in_sample], label_items[in_sample], np.full(int(in_sample.sum()), scenario.blind_rate))
    return {
        "truth": truth,
        "old": (old.value, old.ci, old.n),
        "new": (new.value, new.ci, new.labels),
        "low_share_of_unexposed": float(low[label_items].mean()),
    }


def summarise(scenario: Scenario, runs: int) -> dict[str, Any]:
    """Bias (with its Monte-Carlo standard error), coverage of the 95 % interval and mean n of each figure."""
    results = [project_run(scenario, k) for k in range(runs)]
    truth = np.array([r["truth"] for r in results])
    out: dict[str, Any] = {"runs": runs, "truth": float(truth.mean())}
    for name in ("old", "new"):
        value = np.array([np.nan if r[name][0] is None else r[name][0] for r in results])
        low = np.array([np.nan if r[name][1] is None else r[name][1][0] for r in results])
        high = np.array([np.nan if r[name][1] is None else r[name][1][1] for r in results])
        error = value - truth
        covered = (low <= truth) & (truth <= high)
        out[name] = {
            "mean": float(np.nanmean(value)),
            "bias": float(np.nanmean(error)),
            "bias_se": float(np.nanstd(error, ddof=1) / np.sqrt(np.isfinite(error).sum())),
            "coverage": float(covered.mean()),
            "width": float(np.nanmean(high - low)),
            "n": float(np.mean([r[name][2] for r in results])),
        }
    out["low_share_of_unexposed"] = float(np.mean([r["low_share_of_unexposed"] for r in results]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--items", type=int, default=Scenario.items)
    parser.add_argument("--calibration", type=int, default=Scenario.calibration)
    args = parser.parse_args()
    scenario = Scenario(items=args.items, calibration=args.calibration)
    table = summarise(scenario, args.runs)
    print(
        f"{table['runs']} projects of {scenario.items} items, blind rate {scenario.blind_rate}, overlap "
        f"{scenario.overlap}, {scenario.calibration} calibration labels ({scenario.low_share:.0%} low-confidence); "
        f"mean truth {table['truth']:.3f}; low-confidence share of unexposed labels "
        f"{table['low_share_of_unexposed']:.2f}"
    )
    titles = (("old", "pooled unexposed labels (old blind agreement)"), ("new", "design-based, blind sample"))
    for name, title in titles:
        row = table[name]
        print(
            f"  {title:46s} mean {row['mean']:.3f}  bias {row['bias']:+.3f} (± {row['bias_se']:.3f})"
            f"  coverage {row['coverage']:.3f}  width {row['width']:.3f}  n {row['n']:.0f}"
        )


if __name__ == "__main__":
    main()
