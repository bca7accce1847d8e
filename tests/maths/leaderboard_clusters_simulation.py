"""Simulated leaderboards with prompt clusters and a style effect: do the intervals cover when every pair of models
that shares a prompt is correlated, and does style control recover a planted length effect?

* Five models with strengths θ. Each prompt k is answered by every model; each model's answer to k has its own
  effect δ_km ~ N(0, 0.4²) (a prompt that suits one model), shared by every pair on that prompt, and a length. A
  prompt yields all 10 pairs of models, each labelled once: P(a ≻ b) = logistic(θ_a − θ_b + δ_ka − δ_kb + γ·z_ab)
  with z_ab the normalised length difference and γ = 0.8 (longer answers win by themselves).
* Longer answers come more from the strong models (length grows with θ), so a fit without style control mixes the two
  effects: its strengths are biased. With the length difference as covariate the fit recovers γ and θ.
* Truth: the pseudo-true values, the fit on 20,000 prompts from the same generator (what the estimate converges to).

``.venv/bin/python -m tests.maths.leaderboard_clusters_simulation --runs 1000`` prints the coverage table; every run
is seeded from (seed, run), so any run can be replayed alone.
"""

from __future__ import annotations

import argparse
from functools import lru_cache

import numpy as np

from aggregation.maths import leaderboard
from aggregation.maths.rank_intervals import rank_intervals

THETA = np.array([0.9, 0.45, 0.0, -0.35, -1.0])
GAMMA = 0.8
PROMPT_EFFECT = 0.4
PROMPTS = 60


def data(rng: np.random.Generator, prompts: int) -> tuple[leaderboard.Comparisons, np.ndarray, np.ndarray]:
    """Comparisons (with the pair as their item), the prompt of each, and the length differences."""
    m = THETA.size
    first, second = np.triu_indices(m, k=1)
    pairs = first.size
    effect = rng.normal(0.0, PROMPT_EFFECT, (prompts, m))
    length = np.exp(rng.normal(5.0 + 0.4 * THETA, 0.5, (prompts, m)))
    a = np.tile(first, prompts)
    b = np.tile(second, prompts)
    prompt = np.repeat(np.arange(prompts), pairs)
    la, lb = length[prompt, a], length[prompt, b]
    z = (la - lb) / (la + lb)
    logit = THETA[a] - THETA[b] + effect[prompt, a] - effect[prompt, b] + GAMMA * z
    won = rng.random(a.size) < 1.0 / (1.0 + np.exp(-logit))
    outcome = np.where(won, leaderboard.WIN, leaderboard.LOSS).astype(np.int64)
    comparisons = leaderboard.Comparisons(np.arange(a.size), a, b, outcome, np.ones(a.size))
    return comparisons, prompt, z


def by_prompt(comparisons: leaderboard.Comparisons, prompt: np.ndarray) -> leaderboard.Comparisons:
    c = comparisons
    return leaderboard.Comparisons(prompt, c.first, c.second, c.outcome, c.weight)


@lru_cache(maxsize=1)
def truth() -> tuple[np.ndarray, float]:
    comparisons, prompt, z = data(np.random.default_rng(20261205), 20_000)
    fitted = leaderboard.fit(by_prompt(comparisons, prompt), THETA.size, ties="none", prior=0.0, covariates=z)
    return fitted.strength, float(fitted.style[0])


def run(seed: int, prompts: int = PROMPTS) -> dict[str, float]:
    """One project: which intervals held the truth, and the widths to compare."""
    rng = np.random.default_rng([seed, 7])
    comparisons, prompt, z = data(rng, prompts)
    theta, gamma = truth()
    clustered = leaderboard.fit(by_prompt(comparisons, prompt), THETA.size, ties="none", prior=0.0, covariates=z)
    per_pair = leaderboard.fit(comparisons, THETA.size, ties="none", prior=0.0, covariates=z)
    ranks = rank_intervals(clustered.strength, clustered.covariance, draws=4000, seed=seed)
    true_rank = 1 + np.sum(theta[None, :] > theta[:, None], axis=1)

    def covers(fit: leaderboard.Fit) -> float:
        """The share of models whose strength interval holds its truth (each interval claims 95 % on its own)."""
        return float(np.mean((fit.strength_ci[:, 0] <= theta) & (theta <= fit.strength_ci[:, 1])))

    return {
        "strengths_by_prompt": covers(clustered),
        "strengths_by_pair": covers(per_pair),
        "style_by_prompt": float(clustered.style_ci[0, 0] <= gamma <= clustered.style_ci[0, 1]),
        # Simultaneous: every model's rank inside its interval at once.
        "ranks_by_prompt": float(np.all((ranks.lower <= true_rank) & (true_rank <= ranks.upper))),
        "width_by_prompt": float(np.mean(np.diff(clustered.strength_ci, axis=1))),
        "width_by_pair": float(np.mean(np.diff(per_pair.strength_ci, axis=1))),
    }


def bootstrap_width(seed: int, replicates: int = 300, prompts: int = PROMPTS) -> tuple[float, float]:
    """The clustered 95 % width of the strengths against a bootstrap over prompts on the same data (mean widths)."""
    rng = np.random.default_rng([seed, 11])
    comparisons, prompt, z = data(rng, prompts)
    fitted = leaderboard.fit(by_prompt(comparisons, prompt), THETA.size, ties="none", prior=0.0, covariates=z)
    rows_of = [np.flatnonzero(prompt == k) for k in range(prompts)]
    draws = []
    for _ in range(replicates):
        rows = np.concatenate([rows_of[k] for k in rng.integers(0, prompts, prompts)])
        c = comparisons.subset(rows)
        again = leaderboard.fit(
            leaderboard.Comparisons(c.item, c.first, c.second, c.outcome, c.weight),
            THETA.size,
            ties="none",
            prior=0.0,
            covariates=z[rows],
        )
        draws.append(again.strength)
    spread = np.percentile(np.array(draws), [2.5, 97.5], axis=0)
    return float(np.mean(np.diff(fitted.strength_ci, axis=1))), float(np.mean(spread[1] - spread[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    runs = parser.parse_args()
    results = [run(runs.seed * 1_000_003 + r) for r in range(runs.runs)]
    print(f"{runs.runs} projects of {PROMPTS} prompts × 10 pairs, 95 % intervals")
    for key in ("strengths_by_prompt", "strengths_by_pair", "style_by_prompt", "ranks_by_prompt"):
        print(f"  {key:<22} coverage {np.mean([r[key] for r in results]):.3f}")
    ratio = np.mean([r["width_by_pair"] for r in results]) / np.mean([r["width_by_prompt"] for r in results])
    print(f"  width by pair / by prompt {ratio:.3f}")
    clustered, boot = bootstrap_width(runs.seed)
    print(
        f"  clustered width {clustered:.3f} against a bootstrap over prompts {boot:.3f} (ratio {clustered / boot:.3f})"
    )


if __name__ == "__main__":
    main()
