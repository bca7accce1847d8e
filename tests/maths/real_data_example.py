"""A real-data example of the conclusions figures: OpenAI's "Learning to summarize from human feedback" comparisons
(CNN/DM batch 0: 437 binary choices by 2 workers between summaries of 37 news articles written by four policies;
Modified MIT licence, see NOTICE). The repository keeps only the fields used here
(tests/maths/data/summarize_from_feedback_cnndm_batch0.jsonl: article id, the two policies, the summaries' lengths,
the choice, the worker, the confidence).

* The leaderboard of the four policies from people's choices (Bradley-Terry: binary choices have no ties), its
  intervals clustered by article beside ones that wrongly count every label as independent, and the same fit by
  `choix`.
* A prediction-powered figure: a length rule ("prefer the longer summary", the demo's baseline judge) labels every
  comparison; people's labels are kept on a simple random 30 % of the comparisons only, and the share of
  comparisons where people prefer the first summary is estimated from them, with and without the rule's help, then
  compared with the value from all of people's labels.

``.venv/bin/python -m tests.maths.real_data_example`` prints it (docs/guides/conclusions.md keeps the output).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from aggregation.maths import leaderboard, ppi

DATA = Path(__file__).resolve().parent / "data" / "summarize_from_feedback_cnndm_batch0.jsonl"


def rows() -> list[dict]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def comparisons(data: list[dict]) -> tuple[leaderboard.Comparisons, list[str]]:
    policies = sorted({p for r in data for p in r["policies"]})
    articles = {a: k for k, a in enumerate(sorted({r["item"] for r in data}))}
    index = {p: k for k, p in enumerate(policies)}
    c = leaderboard.Comparisons(
        np.array([articles[r["item"]] for r in data]),
        np.array([index[r["policies"][0]] for r in data]),
        np.array([index[r["policies"][1]] for r in data]),
        np.array([leaderboard.WIN if r["choice"] == 0 else leaderboard.LOSS for r in data]),
        np.ones(len(data)),
    )
    return c, policies


def example(seed: int = 0) -> str:
    data = rows()
    c, policies = comparisons(data)
    clustered = leaderboard.fit(c, len(policies), prior=0.0)
    naive = leaderboard.fit(
        leaderboard.Comparisons(np.arange(len(c)), c.first, c.second, c.outcome, c.weight), len(policies), prior=0.0
    )
    out = [f"{len(c)} comparisons, {clustered.items} articles, {len(policies)} policies", ""]
    out.append("| policy | strength (95 %, clustered by article) | unclustered interval | mean win rate (95 %) |")
    out.append("|---|---|---|---|")
    for k in np.argsort(-clustered.strength):
        lo, hi = clustered.strength_ci[k]
        nlo, nhi = naive.strength_ci[k]
        wlo, whi = clustered.mean_win_rate_ci[k]
        out.append(
            f"| {policies[k]} | {clustered.strength[k]:.2f} ({lo:.2f} to {hi:.2f}) | {nlo:.2f} to {nhi:.2f} | "
            f"{clustered.mean_win_rate[k]:.3f} ({wlo:.3f} to {whi:.3f}) |"
        )

    # Prediction-powered: one unit per (article, pair of summaries); people's share choosing the first summary.
    units: dict[tuple[str, tuple[str, str]], list[dict]] = {}
    for r in data:
        units.setdefault((r["item"], tuple(r["policies"])), []).append(r)
    keys = sorted(units)
    y_all = np.array([np.mean([r["choice"] == 0 for r in units[k]]) for k in keys])
    f_all = np.array([float(units[k][0]["lengths"][0] > units[k][0]["lengths"][1]) for k in keys])
    rng = np.random.default_rng(seed)
    take = round(0.3 * len(keys))
    sampled = np.zeros(len(keys), dtype=bool)
    sampled[rng.choice(len(keys), take, replace=False)] = True
    m = np.array([len(units[k]) for k in keys])
    per_label = np.array(
        [np.var([r["choice"] == 0 for r in units[k]], ddof=1) if len(units[k]) > 1 else np.nan for k in keys]
    )
    # A comparison with one label borrows the mean per-label variance of the others (as maths.accuracy does).
    within = np.where(np.isnan(per_label), np.nanmean(per_label), per_label) / m
    est = ppi.ppi_design(
        y_all[sampled], f_all[sampled], f_all, np.full(take, take / len(keys)), within_variance=within[sampled]
    )
    out += [
        "",
        f"Share of comparisons where people prefer the first summary, {len(keys)} comparisons, people's labels kept on "
        f"a simple random sample of {take} of them (30 %):",
        f"- all of people's labels: {y_all.mean():.3f}",
        f"- prediction-powered (length rule + sample): {est.value:.3f} ({est.ci[0]:.3f} to {est.ci[1]:.3f}), "
        f"λ = {est.lam:.2f}, worth {est.effective_labels:.0f} human-labelled comparisons",
        f"- people only (sample): {est.human_value:.3f} ({est.human_ci[0]:.3f} to {est.human_ci[1]:.3f})",
        f"- length rule only: {est.llm_value:.3f}",
        "",
        "The length rule agrees with people on "
        f"{np.mean((f_all == 1) == (y_all > 0.5)):.0%} of comparisons. One draw, an illustration: coverage is "
        "checked by the simulations.",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    print(example())
