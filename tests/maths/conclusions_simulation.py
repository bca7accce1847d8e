"""Simulated projects for the conclusions figures: the model leaderboard, the prediction-powered figures and the
annotator-population interval of human-human agreement. Each checks that 95 % intervals cover the truth.

* **Leaderboard.** Five models with strengths θ and a Davidson tie parameter ν. Each item pits two random models
  against each other and gets three labels; the item has its own effect δ_i ~ N(0, 0.5²) on the half-difference u
  (a prompt that suits one model's style), shared by its labels: the clustering the intervals must respect. With
  item effects the Davidson model is only an approximation of the labels' distribution, so the truth is its
  pseudo-true value: the fit on 400,000 items from the same generator (what the estimate converges to).
* **Prediction-powered.** 2,000 items; people prefer response 0 of item i with probability q_i and tie with
  probability 0.1 (three labels per labelled item). The human sample is a stratified draw: 6 % of the items where
  the LLM is confident and 20 % of the others, so the inclusion weights differ by more than 3×. A *good* judge
  prefers the response people prefer more often, agreeing with the human majority about 85 % of the time; a
  *biased* one is 10 points more likely to prefer the longer answer than people are. Truth: the finite-population
  mean over the 2,000 items of E[y_i] (the share of labels preferring response 0; the mean signed preference; the
  win credit of model "a" on the items where it meets model "b").
* **Annotator population.** A pool of annotators, each with a skill (chance of following the item's majority) and
  a tie habit; every project draws its annotators and items anew, in one of the designs of :data:`DESIGNS`
  (dense: everyone labels every item; sparse: two of many per item; few: three or four annotators). Truth: the
  chance that two annotators drawn from the pool agree on a random item, by Monte Carlo over 2,000,000 pairs.

``.venv/bin/python -m tests.maths.conclusions_simulation --runs 1000`` prints the coverage table
(docs/guides/conclusions.md keeps it); every run is seeded from (seed, run), so any run can be replayed alone.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from aggregation.maths import annotator_population, leaderboard, ppi

THETA = np.array([0.8, 0.4, 0.0, -0.3, -0.9])
NU = 0.6
ITEM_EFFECT = 0.5


def _leaderboard_data(rng: np.random.Generator, items: int, labels: int = 3) -> leaderboard.Comparisons:
    m = THETA.size
    a = rng.integers(0, m, items)
    b = (a + rng.integers(1, m, items)) % m
    u = (THETA[a] - THETA[b]) / 2 + rng.normal(0.0, ITEM_EFFECT, items)
    z = np.exp(u) + np.exp(-u) + NU
    p_win, p_tie = np.exp(u) / z, NU / z
    draw = rng.random((items, labels))
    outcome = np.where(draw < p_win[:, None], 1, np.where(draw < (p_win + p_tie)[:, None], 0, -1))
    item = np.repeat(np.arange(items), labels)
    return leaderboard.Comparisons(
        item, np.repeat(a, labels), np.repeat(b, labels), outcome.ravel().astype(np.int64), np.ones(item.size)
    )


@lru_cache(maxsize=1)
def leaderboard_truth() -> leaderboard.Fit:
    return leaderboard.fit(_leaderboard_data(np.random.default_rng(20261202), 400_000), THETA.size, prior=0.0)


def leaderboard_run(seed: int, run: int, items: int = 200) -> dict[str, float]:
    truth = leaderboard_truth()
    rng = np.random.default_rng([seed, run, 1])
    fitted = leaderboard.fit(_leaderboard_data(rng, items), THETA.size)
    off = ~np.eye(THETA.size, dtype=bool)
    lo, hi = fitted.strength_ci[:, 0], fitted.strength_ci[:, 1]
    wlo, whi = fitted.win_rate_ci[..., 0][off], fitted.win_rate_ci[..., 1][off]
    true_w = truth.win_rate[off]
    mlo, mhi = fitted.mean_win_rate_ci[:, 0], fitted.mean_win_rate_ci[:, 1]
    return {
        "strength": float(np.mean((lo <= truth.strength) & (truth.strength <= hi))),
        "win_rate": float(np.mean((wlo <= true_w) & (true_w <= whi))),
        "mean_win_rate": float(np.mean((mlo <= truth.mean_win_rate) & (truth.mean_win_rate <= mhi))),
    }


@dataclass(frozen=True)
class PPIWorld:
    q: np.ndarray  # P(a label prefers response 0)
    longer_first: np.ndarray  # response 0 is the longer one
    confident: np.ndarray  # the LLM's stratum
    model_pair: np.ndarray  # 0: response 0 by model "a" against "b"; 1: reversed; 2: other models
    llm_first: np.ndarray  # the LLM prefers response 0


TIE = 0.1


def ppi_world(rng: np.random.Generator, judge: str, n: int = 2000) -> PPIWorld:
    model_pair = rng.integers(0, 3, n)
    # Model "a" writes the longer answer more often, so a length-biased judge over-rates it and every figure.
    longer_first = rng.random(n) < np.select([model_pair == 0, model_pair == 1], [0.7, 0.3], 0.6)
    # People like the longer answer a little; items range from clear to coin flips.
    logit = rng.normal(0.0, 1.5, n) + np.where(longer_first, 0.3, -0.3)
    q = (1 - TIE) / (1 + np.exp(-logit))
    decided = q / (1 - TIE)
    if judge == "good":
        p_llm = 1 / (1 + np.exp(-2.2 * (decided - 0.5) * 6))
    elif judge == "biased":
        p_llm = np.clip(decided + np.where(longer_first, 0.10, -0.10), 0, 1)
    else:
        raise ValueError(judge)
    llm_first = rng.random(n) < p_llm
    confident = np.abs(p_llm - 0.5) > 0.3
    return PPIWorld(q, longer_first, confident, model_pair, llm_first)


def ppi_run(seed: int, run: int, judge: str, labels: int = 3) -> dict[str, float]:
    rng = np.random.default_rng([seed, run, 2 if judge == "good" else 3])
    world = ppi_world(rng, judge)
    n = world.q.size
    rate = np.where(world.confident, 0.06, 0.20)
    # Stratified simple random sampling: exactly round(rate × stratum size) items per stratum.
    sampled = np.zeros(n, dtype=bool)
    for stratum in (False, True):
        idx = np.flatnonzero(world.confident == stratum)
        take = round(rate[idx[0]] * idx.size) if idx.size else 0
        sampled[rng.choice(idx, take, replace=False)] = True
    probability = np.zeros(n)
    for stratum in (False, True):
        inside = world.confident == stratum
        probability[inside] = sampled[inside].sum() / inside.sum()
    s_idx = np.flatnonzero(sampled)
    draw = rng.random((s_idx.size, labels))
    q = world.q[s_idx]
    label = np.where(draw < q[:, None], 1.0, np.where(draw < (q + TIE)[:, None], 0.0, -1.0))
    llm_s = np.where(world.llm_first, 1.0, -1.0)
    results: dict[str, float] = {}
    expected_s = 2 * world.q + TIE - 1  # E[s] = q − (1 − q − TIE)
    figures = {
        "share_first": ((label == 1).mean(axis=1), world.llm_first.astype(float), world.q, np.ones(n, dtype=bool)),
        "mean_margin": (label.mean(axis=1), llm_s, expected_s, np.ones(n, dtype=bool)),
    }
    # Model "a" against "b": response 0 is a's when model_pair == 0, b's when 1; win credit with a tie as half.
    orient = np.where(world.model_pair == 0, 1.0, -1.0)
    credit = (1 + label * orient[s_idx][:, None]) / 2
    figures["win_rate_ab"] = (
        credit.mean(axis=1),
        (1 + llm_s * orient) / 2,
        (1 + expected_s * orient) / 2,
        world.model_pair < 2,
    )
    for name, (y_all, f, truth_item, domain) in figures.items():
        in_domain = domain[s_idx]
        y = y_all[in_domain]
        v2 = (
            np.var(
                np.asarray(
                    {"share_first": (label == 1), "mean_margin": label, "win_rate_ab": credit}[name], dtype=float
                )[in_domain],
                axis=1,
                ddof=1,
            )
            / labels
        )
        est = ppi.ppi_design(
            y,
            f[s_idx][in_domain],
            f[domain],
            probability[s_idx][in_domain],
            within_variance=v2,
            strata=world.confident[s_idx][in_domain].astype(np.int64),
        )
        truth = float(truth_item[domain].mean())
        results[f"{name}_ppi"] = float(est.ci[0] <= truth <= est.ci[1])
        results[f"{name}_human"] = float(est.human_ci[0] <= truth <= est.human_ci[1])
        results[f"{name}_width_ratio"] = (est.ci[1] - est.ci[0]) / (est.human_ci[1] - est.human_ci[0])
        results[f"{name}_effective"] = est.effective_labels / est.labelled
        results[f"{name}_llm_bias"] = est.llm_value - truth
    return results


POOL = 400


@lru_cache(maxsize=1)
def annotator_pool() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(77)
    skill = rng.beta(6, 2, POOL)  # chance of following the item's leaning
    tie_habit = rng.beta(1, 9, POOL)
    return skill, tie_habit


def _labels(rng: np.random.Generator, lean: np.ndarray, who: np.ndarray) -> np.ndarray:
    """Categories −1, 0, +1 of annotators ``who`` (items, k) on items with majority side ``lean`` (±1)."""
    skill, tie_habit = annotator_pool()
    draw = rng.random(who.shape)
    tie = draw < tie_habit[who]
    follow = rng.random(who.shape) < skill[who]
    return np.where(tie, 0.0, np.where(follow, lean[:, None], -lean[:, None]))


def _item_lean(rng: np.random.Generator, items: int) -> np.ndarray:
    return np.where(rng.random(items) < 0.5, 1.0, -1.0)


@lru_cache(maxsize=1)
def population_truth() -> float:
    rng = np.random.default_rng(99)
    n = 2_000_000
    who = np.column_stack([rng.integers(0, POOL, n), rng.integers(0, POOL, n)])
    who = who[who[:, 0] != who[:, 1]]
    labels = _labels(rng, _item_lean(rng, who.shape[0]), who)
    return float(np.mean(labels[:, 0] == labels[:, 1]))


#: (annotators per project, items, labels per item) of each annotator-population design.
DESIGNS: dict[str, tuple[int, int, int]] = {
    "three_of_eight": (8, 150, 3),
    "dense": (6, 100, 6),
    "dense_ten": (10, 60, 10),
    "sparse": (30, 300, 2),
    "sparse_twelve": (12, 200, 2),
    "few": (4, 150, 2),
    "three_dense": (3, 200, 3),
}


def population_run(seed: int, run: int, annotators: int = 8, items: int = 150, per_item: int = 3) -> dict[str, float]:
    truth = population_truth()
    rng = np.random.default_rng([seed, run, 4])
    chosen = rng.choice(POOL, annotators, replace=False)
    slots = np.argsort(rng.random((items, annotators)), axis=1)[:, :per_item]
    labels = _labels(rng, _item_lean(rng, items), chosen[slots])
    pairs = annotator_population.label_pairs(labels, slots)
    est = annotator_population.pairwise_agreement(*pairs)
    assert est.items_ci is not None
    assert est.population_ci is not None
    return {
        "items_only": float(est.items_ci[0] <= truth <= est.items_ci[1]),
        "two_way": float(est.population_ci[0] <= truth <= est.population_ci[1]),
        "width_ratio": (est.population_ci[1] - est.population_ci[0]) / (est.items_ci[1] - est.items_ci[0]),
        "holds_item_interval": float(
            est.population_ci[0] <= est.items_ci[0] and est.items_ci[1] <= est.population_ci[1]
        ),
    }


def simulate(runs: int, seed: int = 0, only: str | None = None) -> dict[str, dict[str, float]]:
    """Mean of every run's figures, per scenario."""
    table: dict[str, dict[str, float]] = {}
    scenarios: dict[str, Any] = {
        "leaderboard": lambda r: leaderboard_run(seed, r),
        "ppi_good": lambda r: ppi_run(seed, r, "good"),
        "ppi_biased": lambda r: ppi_run(seed, r, "biased"),
    }
    for design, (annotators, items, per_item) in DESIGNS.items():
        scenarios[f"annotator_population_{design}"] = lambda r, a=annotators, i=items, k=per_item: population_run(
            seed, r, a, i, k
        )
    for name, one in scenarios.items():
        if only and only not in name:
            continue
        rows = [one(r) for r in range(runs)]
        table[name] = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
        ratios = [row[key] for row in rows for key in row if key.endswith("width_ratio")]
        if ratios:
            table[name]["max_width_ratio"] = float(np.max(ratios))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="run the scenarios whose name contains this (e.g. annotator_population)")
    args = parser.parse_args()
    table = simulate(args.runs, args.seed, args.only)
    print(f"{args.runs} runs per scenario, seed {args.seed}")
    for name, row in table.items():
        print(f"\n{name}")
        for key, value in row.items():
            half = 1.96 * math.sqrt(max(value * (1 - value), 0) / args.runs) if 0 <= value <= 1 else float("nan")
            print(f"  {key:28s} {value:8.4f}" + (f"  (±{half:.4f})" if key.find("ratio") < 0 else ""))


if __name__ == "__main__":
    main()
