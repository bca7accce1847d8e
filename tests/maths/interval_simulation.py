"""Simulated annotation projects with known true figures, to check that stated intervals cover them.

Every project has items of a few latent types θ (how strongly response 0 is better; negative = response 1). Each
of the m labels of an item (m varies per item) is a signed preference s = θ + N(0, σ²), read as "prefers response 0"
(s ≥ band), "prefers response 1" (s ≤ −band) or a tie. Labels of one item share θ, so they are correlated: the
clustering the intervals must respect. The LLM suggests the truly better response with a probability that depends on
the type (harder items, more errors) and never a tie; gold, where an item has it, is the truly better response. On
shown items each annotator copies the suggestion with probability ``copy``. Item sizes, blind draw and gold draw are
independent of the type, so every figure's population value is a closed form over the types (:func:`truths`).

Everything is drawn for all projects at once (arrays of shape projects × items × labels); :func:`project` slices one
out in the shapes the maths functions take. Pure numpy, no database: ``.venv/bin/python -m
tests.maths.interval_simulation [projects]`` prints the coverage table of every reported interval per scenario.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

TIE = 0.0


@dataclass(frozen=True)
class Scenario:
    n_projects: int = 2000
    items: tuple[int, int] = (20, 60)  # items per project, uniform inclusive
    labels: tuple[int, int] = (2, 5)  # labels per item, uniform inclusive
    blind_rate: float = 0.4
    gold_rate: float = 0.5
    copy: float = 0.3
    sigma: float = 0.35
    tie_band: float = 0.05
    thetas: tuple[float, ...] = (-0.6, -0.25, -0.08, 0.08, 0.25, 0.6)
    theta_p: tuple[float, ...] = (0.15, 0.2, 0.15, 0.15, 0.2, 0.15)
    # P(LLM suggests the truly better response) per type, by |θ|: easy items, middling, hard.
    llm_right: dict[float, float] = field(default_factory=lambda: {0.6: 0.95, 0.25: 0.85, 0.08: 0.6})
    seed: int = 20261201


@dataclass(frozen=True)
class Simulation:
    scenario: Scenario
    item_present: np.ndarray  # (P, K) bool
    label_present: np.ndarray  # (P, K, M) bool
    signed: np.ndarray  # (P, K, M) s before any copying (the project's agreement figures use these)
    human: np.ndarray  # (P, K, M) preferred sign after copying on shown items: +1, −1 or 0 (tie)
    own: np.ndarray  # (P, K, M) preferred sign of s
    llm: np.ndarray  # (P, K) ±1
    gold: np.ndarray  # (P, K) ±1, or 0 where the item has no gold
    blind: np.ndarray  # (P, K) bool


def _sign(s: np.ndarray, band: float) -> np.ndarray:
    return np.where(s >= band, 1.0, np.where(s <= -band, -1.0, TIE))


def simulate(scenario: Scenario) -> Simulation:
    rng = np.random.default_rng(scenario.seed)
    p, k_max, m_max = scenario.n_projects, scenario.items[1], scenario.labels[1]
    n_items = rng.integers(scenario.items[0], scenario.items[1] + 1, size=p)
    item_present = np.arange(k_max)[None, :] < n_items[:, None]
    n_labels = rng.integers(scenario.labels[0], scenario.labels[1] + 1, size=(p, k_max))
    label_present = item_present[..., None] & (np.arange(m_max)[None, None, :] < n_labels[..., None])
    types = rng.choice(len(scenario.thetas), size=(p, k_max), p=np.asarray(scenario.theta_p))
    theta = np.asarray(scenario.thetas)[types]
    signed = theta[..., None] + rng.normal(0.0, scenario.sigma, size=(p, k_max, m_max))
    own = _sign(signed, scenario.tie_band)
    right = np.vectorize(lambda t: scenario.llm_right[abs(t)])(theta)
    truth_side = np.sign(theta)
    llm = np.where(rng.random((p, k_max)) < right, truth_side, -truth_side)
    blind = rng.random((p, k_max)) < scenario.blind_rate
    copies = (~blind)[..., None] & (rng.random((p, k_max, m_max)) < scenario.copy)
    human = np.where(copies, llm[..., None], own)
    gold = np.where(rng.random((p, k_max)) < scenario.gold_rate, truth_side, 0.0)
    return Simulation(scenario, item_present, label_present, signed, human, own, llm, gold, blind)


def truths(scenario: Scenario) -> dict[str, float]:
    """Population value of every figure, from the type distribution (sizes and draws are independent of type)."""
    w = np.asarray(scenario.theta_p)
    theta = np.asarray(scenario.thetas)
    normal = NormalDist()
    b, sd = scenario.tie_band, scenario.sigma
    plus = np.array([1.0 - normal.cdf((b - t) / sd) for t in theta])
    minus = np.array([normal.cdf((-b - t) / sd) for t in theta])
    tie = 1.0 - plus - minus
    a = np.array([scenario.llm_right[abs(t)] for t in theta])
    # P(human agrees with the LLM | type): the LLM says the true side with probability a.
    right_side = np.where(theta > 0, plus, minus)
    wrong_side = np.where(theta > 0, minus, plus)
    agree = a * right_side + (1 - a) * wrong_side
    blind = float(w @ agree)
    q = scenario.copy
    shown = q + (1 - q) * blind

    # Pair agreement on shown items: per label P(c) = q·[c = L] + (1 − q)·p_c, averaged over the LLM's L.
    def pair_agreement_given(llm_plus: bool) -> np.ndarray:
        pp = (1 - q) * plus + (q if llm_plus else 0.0)
        pm = (1 - q) * minus + (0.0 if llm_plus else q)
        pt = (1 - q) * tie
        return np.asarray(pp**2 + pm**2 + pt**2)

    llm_plus_prob = np.where(theta > 0, a, 1 - a)
    shown_pairs = llm_plus_prob * pair_agreement_given(True) + (1 - llm_plus_prob) * pair_agreement_given(False)
    with_ties = float(w @ (plus**2 + minus**2 + tie**2))
    pooled = np.array([w @ plus, w @ minus, w @ tie])
    mean_theta = float(w @ theta)
    var_theta = float(w @ (theta - mean_theta) ** 2)
    return {
        "blind": blind,
        "shown": shown,
        "gap": shown - blind,
        "gold": float(w @ a),
        "human_human_blind": with_ties,
        "human_human_shown": float(w @ shown_pairs),
        "pairwise_with_ties": with_ties,
        "pairwise_without_ties": float(w @ (plus**2 + minus**2)) / float(w @ (plus + minus) ** 2),
        "alpha_nominal": 1.0 - (1.0 - with_ties) / (1.0 - float(pooled @ pooled)),
        "alpha_interval": var_theta / (var_theta + sd * sd),
    }


@dataclass(frozen=True)
class Project:
    """One simulated project in the shapes the maths functions take."""

    blind_matches: np.ndarray
    blind_items: np.ndarray
    shown_matches: np.ndarray
    shown_items: np.ndarray
    gold_matches: np.ndarray  # one per item with gold: the LLM's suggestion equals gold
    gold_items: np.ndarray
    blind_labels: np.ndarray  # items × labels, NaN where absent: human preferred sign on blind items
    shown_labels: np.ndarray
    signed: np.ndarray  # items × labels, NaN where absent: s on every item


def project(sim: Simulation, index: int) -> Project:
    present = sim.label_present[index]
    items = np.flatnonzero(sim.item_present[index])
    present = present[items]
    human = sim.human[index][items]
    llm = sim.llm[index][items]
    blind = sim.blind[index][items]
    gold = sim.gold[index][items]
    item_ids = np.broadcast_to(items[:, None], present.shape)
    match = human == llm[:, None]
    on_blind = present & blind[:, None]
    on_shown = present & ~blind[:, None]
    labels = np.where(present, human, np.nan)
    has_gold = gold != 0
    return Project(
        blind_matches=match[on_blind],
        blind_items=item_ids[on_blind],
        shown_matches=match[on_shown],
        shown_items=item_ids[on_shown],
        gold_matches=(llm == gold)[has_gold],
        gold_items=items[has_gold],
        blind_labels=labels[blind],
        shown_labels=labels[~blind],
        signed=np.where(present, sim.signed[index][items], np.nan),
    )


def coverage(intervals: dict[str, list[tuple[float, float] | None]], truth: dict[str, float]) -> dict[str, Any]:
    """Per figure: share of reported intervals that contain the true value, and how many were reported."""
    table: dict[str, Any] = {}
    for name, cis in intervals.items():
        reported = [ci for ci in cis if ci is not None]
        hits = sum(1 for low, high in reported if low <= truth[name] <= high)
        n = len(reported)
        table[name] = {
            "coverage": hits / n if n else math.nan,
            "reported": n,
            "of": len(cis),
            "mean_width": float(np.mean([high - low for low, high in reported])) if n else math.nan,
        }
    return table


NAMES = (
    "blind",
    "shown",
    "gap",
    "gold",
    "human_human_blind",
    "human_human_shown",
    "pairwise_with_ties",
    "pairwise_without_ties",
    "alpha_nominal",
    "alpha_interval",
)


def reported_intervals(
    sim: Simulation, cross_mode_items: int | None = None
) -> dict[str, list[tuple[float, float] | None]]:
    """Each project's intervals as the project figures compute them, None where a figure is withheld. The cross-mode
    figures use every item, or only the first ``cross_mode_items`` (the blind ones of a fixed-size project)."""
    from aggregation.maths import agreement, comparisons

    def shown_figure(estimate: agreement.Estimate) -> tuple[float, float] | None:
        reported = comparisons.figure(estimate)
        return None if reported["value"] is None else estimate.ci

    out: dict[str, list[tuple[float, float] | None]] = {name: [] for name in NAMES}
    for i in range(sim.scenario.n_projects):
        pr = project(sim, i)
        out["blind"].append(shown_figure(comparisons.agreement_estimate(pr.blind_matches, pr.blind_items)))
        out["shown"].append(shown_figure(comparisons.agreement_estimate(pr.shown_matches, pr.shown_items)))
        out["gold"].append(shown_figure(comparisons.agreement_estimate(pr.gold_matches, pr.gold_items)))
        gap = comparisons.anchoring_gap(pr.shown_matches, pr.shown_items, pr.blind_matches, pr.blind_items)
        out["gap"].append(gap.ci)
        for side, labels in (("blind", pr.blind_labels), ("shown", pr.shown_labels)):
            pairs = agreement.pairwise_agreement(labels, ~np.isnan(labels), with_ties=True, interval=True)
            out[f"human_human_{side}"].append(shown_figure(pairs))
        signed = pr.signed[:cross_mode_items]
        figures = agreement.cross_mode_agreement(signed, ~np.isnan(signed), tie_band=sim.scenario.tie_band)
        for name in ("pairwise_with_ties", "pairwise_without_ties", "alpha_nominal", "alpha_interval"):
            out[name].append(figures[name].ci)
    return out


#: The scenarios the coverage test runs: moderate agreement (blind ≈ 0.66) and agreement near the handoff
#: threshold (blind ≈ 0.91), both with 40-120 items of 2-5 labels and a quarter of the items blind (10-30 blind
#: items, about what the default minimum blind sample of 20 gives), and a small one (8-20 items) reported only.
SCENARIOS = {
    "moderate": Scenario(items=(40, 120), blind_rate=0.25, gold_rate=0.3),
    "near_threshold": Scenario(
        items=(40, 120),
        blind_rate=0.25,
        gold_rate=0.3,
        thetas=(-0.7, -0.4, 0.4, 0.7),
        theta_p=(0.25, 0.25, 0.25, 0.25),
        llm_right={0.7: 0.99, 0.4: 0.95},
        sigma=0.3,
        seed=5,
    ),
    "small": Scenario(items=(8, 20), seed=9),
}


def main() -> None:
    import dataclasses
    import sys

    n_projects = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for name, base in SCENARIOS.items():
        scenario = dataclasses.replace(base, n_projects=n_projects)
        truth = truths(scenario)
        table = coverage(reported_intervals(simulate(scenario)), truth)
        print(f"{name}: {n_projects} projects")
        for figure, row in table.items():
            print(
                f"  {figure:24s} truth {truth[figure]:.3f}  coverage {row['coverage']:.3f}"
                f"  reported {row['reported']}/{row['of']}  mean width {row['mean_width']:.3f}"
            )


if __name__ == "__main__":
    main()
