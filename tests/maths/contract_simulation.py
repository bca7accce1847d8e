"""Known-truth simulations of the contracts beside the handoff threshold (aggregation.maths.selective_risk,
alt_test, distributional, label_budget), and of what a lead can do with 100 blind labels.

* **Selective risk.** 2,000 items with the model's confidence c ~ U(0.5, 1) and a chance of disagreeing with a blind
  person q(c) = 0.45·(1 − c)/0.5 + 0.01 (0.46 at c = 0.5, 0.01 at c = 1), one blind label per sampled item, the
  sample uniform. Truth: R(λ) = mean of q over the items with c ≥ λ. Reported: how often the certified threshold
  violates R(λ̂) ≤ α (the guarantee: at most δ = 5 %), and the share certified. In the *flat* world every item's q
  is 0.101 against α = 0.1: every null is true and every certification a violation.
* **No worse than human.** Binary labels; five annotators of accuracy 0.75-0.9 against a hidden truth, three of
  them per item, ε = 0.2. Models of accuracy 0.9 (good), 0.55 (bad) and at the boundary: the accuracy at which every
  annotator's true ρ_f − ρ_h is −ε or lower (found by bisection on 200,000 items), where passing is an error.
  With two other labels per item ties are frequent and ρ_f − ρ_h moves slowly: the boundary lies below 0.5.
* **Distributional.** Items with two responses whose true (μ, ν) are drawn per item; four people per item see them
  with noise N(0, 0.1²). The model states the truth shifted by s in μ. Truth: the mean excess E[D_model − D_human]
  by Monte Carlo; at the shift where it equals the margin, passing is an error.
* **Budget.** Five confidence bins with errors 0.40, 0.25, 0.12, 0.05, 0.02 and equal shares: the labels the
  forecast says a target needs, then the contract run on a uniform sample of that size.
* **100 blind labels.** Each contract with 100 blind labels in the project shape of issue 35's measurements (the
  model right on 95 % of high-confidence and 60 % of low-confidence items; five annotators).

``.venv/bin/python -m tests.maths.contract_simulation --runs 1000`` prints the table (docs/guides/contracts.md keeps
it); every run is seeded from (seed, run).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from aggregation.maths import alt_test, distributional, label_budget, selective_risk

# ---------------------------------------------------------------------------------------------------------- selective


def _risk_world(rng: np.random.Generator, n: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    conf = rng.uniform(0.5, 1.0, n)
    return conf, 0.45 * (1.0 - conf) / 0.5 + 0.01


def selective_run(
    seed: int, run: int, items: int = 300, target: float = 0.1, flat: float | None = None
) -> dict[str, float]:
    """``flat``: every item's chance of disagreement is this, so with flat > target every null is true and any
    certification is a violation."""
    rng = np.random.default_rng([seed, run, 11])
    conf, q = _risk_world(rng)
    if flat is not None:
        q = np.full(conf.size, flat)
    drawn = rng.choice(conf.size, items, replace=False)
    loss = (rng.random(items) < q[drawn]).astype(np.float64)
    est = selective_risk.selective_risk(loss, conf[drawn], np.full(items, items / conf.size), target=target)
    if est.threshold is None:
        return {"certified": 0.0, "violation": 0.0, "share": 0.0, "withheld": float(est.verdict == "withheld")}
    true_risk = float(q[conf >= est.threshold].mean())
    return {
        "certified": 1.0,
        "violation": float(true_risk > target),
        "share": float(np.mean(conf >= est.threshold)),
        "withheld": 0.0,
    }


# ----------------------------------------------------------------------------------------------------------- alt-test

SKILL = np.array([0.75, 0.8, 0.85, 0.88, 0.9])
EPSILON = 0.2


def _alt_world(
    rng: np.random.Generator, items: int, model_accuracy: float, per_item: int = 3, skill: np.ndarray = SKILL
):
    truth = rng.integers(0, 2, items)
    who = np.argsort(rng.random((items, skill.size)), axis=1)[:, :per_item]
    right = rng.random((items, per_item)) < skill[who]
    labels = np.full((items, skill.size), np.nan)
    np.put_along_axis(labels, who, np.where(right, truth[:, None], 1 - truth[:, None]).astype(float), axis=1)
    model = np.where(rng.random(items) < model_accuracy, truth, 1 - truth).astype(float)
    return labels, model


def _true_gaps(model_accuracy: float) -> np.ndarray:
    """ρ_f^j − ρ_h^j per annotator on 200,000 items."""
    labels, model = _alt_world(np.random.default_rng(5), 200_000, model_accuracy)
    est = alt_test.alt_test(labels, model, epsilon=EPSILON, min_items=1)
    return np.array([a.rho_model - a.rho_person for a in est.annotators])


@lru_cache(maxsize=1)
def boundary_accuracy() -> float:
    """The model accuracy at which the largest true gap is exactly −ε: every annotator's null just holds."""
    low, high = 0.0, 0.9
    for _ in range(14):
        mid = (low + high) / 2
        if _true_gaps(mid).max() > -EPSILON:
            high = mid
        else:
            low = mid
    return low


def alt_run(seed: int, run: int, model_accuracy: float, items: int = 150) -> dict[str, float]:
    rng = np.random.default_rng([seed, run, 12])
    labels, model = _alt_world(rng, items, model_accuracy)
    est = alt_test.alt_test(labels, model, epsilon=EPSILON)
    return {"passes": float(est.verdict == "holds"), "withheld": float(est.verdict == "withheld")}


# ------------------------------------------------------------------------------------------------------ distributional

PEOPLE = 4
NOISE = 0.1


def _ifs_world(rng: np.random.Generator, items: int, shift: float):
    mu = rng.uniform(0.2, 0.6, (items, 2))
    nu = rng.uniform(0.05, 0.35, (items, 2))
    pm = np.clip(mu[:, None, :] + rng.normal(0, NOISE, (items, PEOPLE, 2)), 0, 1)
    pn = np.clip(nu[:, None, :] + rng.normal(0, NOISE, (items, PEOPLE, 2)), 0, 1 - pm)
    mm = np.clip(mu + shift, 0, 1)
    return pm, pn, mm, np.minimum(nu, 1 - mm)


def _true_excess(shift: float, items: int = 20_000) -> float:
    pm, pn, mm, mn = _ifs_world(np.random.default_rng(6), items, shift)
    half = PEOPLE // 2
    a_mu, a_nu = pm[:, :half].mean(axis=1), pn[:, :half].mean(axis=1)
    b_mu, b_nu = pm[:, half:].mean(axis=1), pn[:, half:].mean(axis=1)

    def d(m1, n1, m2, n2):
        d_mu, d_nu = m1 - m2, n1 - n2
        return np.sqrt(d_mu * (d_mu + d_nu) + d_nu**2).mean(axis=1)

    model = 0.5 * (d(mm, mn, a_mu, a_nu) + d(mm, mn, b_mu, b_nu))
    return float(np.mean(model - d(a_mu, a_nu, b_mu, b_nu)))


@lru_cache(maxsize=1)
def boundary_shift(margin: float = 0.05) -> float:
    low, high = 0.0, 0.5
    for _ in range(18):
        mid = (low + high) / 2
        if _true_excess(mid) < margin:
            low = mid
        else:
            high = mid
    return high


def distributional_run(seed: int, run: int, shift: float, items: int = 60) -> dict[str, float]:
    rng = np.random.default_rng([seed, run, 13])
    est = distributional.distributional(*_ifs_world(rng, items, shift), seed=run)
    return {"passes": float(est.verdict == "holds"), "withheld": float(est.verdict == "withheld")}


# ------------------------------------------------------------------------------------------------------------- budget

BUDGET_SHARE = (0.2, 0.2, 0.2, 0.2, 0.2)
BUDGET_ERROR = (0.40, 0.25, 0.12, 0.05, 0.02)
EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def budget_run(seed: int, run: int, target: float = 0.1, fraction: float = 1.0) -> dict[str, float]:
    """The contract on a uniform sample of ``fraction`` × the forecast's labels: does it certify the forecast cell?"""
    widest, needed = label_budget.labels_needed(BUDGET_SHARE, BUDGET_ERROR, target)
    assert needed is not None
    rng = np.random.default_rng([seed, run, 14])
    n_pop = 5000
    bin_of = rng.integers(0, 5, n_pop)
    conf = np.array(EDGES)[bin_of] + 0.001
    q = np.array(BUDGET_ERROR)[bin_of]
    items = max(1, int(needed * fraction))
    drawn = rng.choice(n_pop, items, replace=False)
    loss = (rng.random(items) < q[drawn]).astype(np.float64)
    est = selective_risk.selective_risk(
        loss, conf[drawn], np.full(items, items / n_pop), target=target, thresholds=np.array(EDGES[:-1]) + 0.001
    )
    share = float(np.mean(conf >= est.threshold)) if est.threshold is not None else 0.0
    return {"reaches_forecast": float(share >= widest - 0.05), "labels": float(needed)}


# --------------------------------------------------------------------------------------------------- 100 blind labels


def hundred_labels_run(seed: int, run: int) -> dict[str, float]:
    """Issue 35's project shape with 100 blind labels: which contracts give a verdict, and how often they hold."""
    rng = np.random.default_rng([seed, run, 15])
    # Selective risk: 100 items, one blind label each; model right on 95 % (high confidence) and 60 % (low).
    n = 100
    conf = rng.uniform(0.5, 1.0, n)
    q = np.where(conf >= 0.75, 0.05, 0.40)
    loss = (rng.random(n) < q).astype(np.float64)
    sr = selective_risk.selective_risk(loss, conf, np.full(n, 0.25), target=0.1)
    sr20 = selective_risk.selective_risk(loss, conf, np.full(n, 0.25), target=0.2)
    # No worse than human: 100 labels = 34 items × 3 of 5 annotators (about 20 items each), or 50 items × 2 of 3.
    labels, model = _alt_world(rng, 34, 0.9)
    at = alt_test.alt_test(labels, model, epsilon=EPSILON)
    labels3, model3 = _alt_world(rng, 50, 0.9, per_item=2, skill=SKILL[-3:])
    at3 = alt_test.alt_test(labels3, model3, epsilon=EPSILON)
    # Distributional: 100 labels = 25 items × 4 people, or 50 items × 2.
    dist4 = distributional.distributional(*_ifs_world(rng, 25, 0.0), seed=run)
    pm, pn, mm, mn = _ifs_world(rng, 50, 0.0)
    dist2 = distributional.distributional(pm[:, :2], pn[:, :2], mm, mn, seed=run)
    return {
        "selective_risk_holds": float(sr.verdict == "holds"),
        "selective_risk_withheld": float(sr.verdict == "withheld"),
        "selective_risk_at_0.2_holds": float(sr20.verdict == "holds"),
        "alt_test_34x3_of_5_withheld": float(at.verdict == "withheld"),
        "alt_test_50x2_of_3_withheld": float(at3.verdict == "withheld"),
        "alt_test_50x2_of_3_holds": float(at3.verdict == "holds"),
        "distributional_25x4_withheld": float(dist4.verdict == "withheld"),
        "distributional_50x2_holds": float(dist2.verdict == "holds"),
    }


# --------------------------------------------------------------------------------------------------------------- main


def scenarios(seed: int) -> dict[str, Callable[[int], dict[str, float]]]:
    return {
        "selective_risk_300": lambda r: selective_run(seed, r),
        "selective_risk_1000": lambda r: selective_run(seed, r, items=1000),
        "selective_risk_flat_1000": lambda r: selective_run(seed, r, items=1000, flat=0.101),
        "alt_test_good": lambda r: alt_run(seed, r, 0.9),
        "alt_test_bad": lambda r: alt_run(seed, r, 0.55),
        "alt_test_boundary": lambda r: alt_run(seed, r, boundary_accuracy()),
        "distributional_truth": lambda r: distributional_run(seed, r, 0.0),
        "distributional_boundary": lambda r: distributional_run(seed, r, boundary_shift()),
        "budget_forecast": lambda r: budget_run(seed, r),
        "budget_quarter": lambda r: budget_run(seed, r, fraction=0.25),
        "hundred_blind_labels": lambda r: hundred_labels_run(seed, r),
    }


def simulate(runs: int, seed: int = 0, only: str | None = None) -> dict[str, dict[str, float]]:
    table = {}
    for name, one in scenarios(seed).items():
        if only and only not in name:
            continue
        rows = [one(r) for r in range(runs)]
        table[name] = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="run the scenarios whose name contains this")
    args = parser.parse_args()
    print(f"{args.runs} runs per scenario, seed {args.seed}")
    print(f"alt-test boundary accuracy {boundary_accuracy():.3f}; distributional boundary shift {boundary_shift():.3f}")
    for name, row in simulate(args.runs, args.seed, args.only).items():
        print(f"\n{name}")
        for key, value in row.items():
            half = 1.96 * math.sqrt(max(value * (1 - value), 0) / args.runs) if 0 <= value <= 1 else float("nan")
            print(f"  {key:30s} {value:9.4f}" + (f"  (±{half:.4f})" if 0 <= value <= 1 else ""))


if __name__ == "__main__":
    main()
