"""Simulations for the study designs: position bias flags and adaptive overlap at equal label budget.

Pure numpy, no database. ``.venv/bin/python -m tests.maths.study_simulations [runs]`` prints both tables.

**Position bias.** An annotator judges ``n`` two-response items; each item has a latent signed preference θ (response
0 better when positive) and is shown in a random order, as the page does. The annotator prefers the first-shown
response outright with probability ``bias`` (a positional habit) and otherwise judges on content: the sign of
θ + N(0, σ²), a tie when it falls within the tie band. The flag rate over seeded runs at bias 0 is the false-flag
rate (nominally ≤ 5 %, the Wilson interval's miss rate); at larger biases it is the power.

**Adaptive overlap.** Items have θ ∈ [−1, 1] drawn from a mixture of clear and close preferences; each label is an
IFS judgment whose signed preference is θ + N(0, σ_i²) with σ larger on close items, and whose hesitation π grows
as |θ| shrinks (people hesitate on close calls). The aggregate is the mean signed preference s̄ (the weighted mean
with equal weights, projected as in DESIGN's common scale). *Uniform* gives every item the same k labels. *Adaptive*
gives every item k − 1, then spends the same remaining budget in rounds with :func:`aggregation.maths.adaptive.allocate`
(one extra label per uncertain item per round, per-item cap). Error against truth: the share of items whose
aggregated preference has the wrong sign (items with θ = 0 excluded) and the mean |s̄ − θ|.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from aggregation.maths.adaptive import allocate
from aggregation.maths.position_bias import first_preferred, position_bias

TIE_BAND = 0.05


def biased_annotator(
    rng: np.random.Generator, *, n: int, bias: float, sigma: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """(preferred stored position or −1, stored position shown first) for ``n`` judgments of one annotator."""
    theta = rng.uniform(-1.0, 1.0, n)
    shown_first = rng.integers(0, 2, n)
    s = theta + rng.normal(0.0, sigma, n)
    content = np.where(s >= TIE_BAND, 0, np.where(s <= -TIE_BAND, 1, -1))
    habit = rng.random(n) < bias
    return np.where(habit, shown_first, content), shown_first


def flag_rates(*, biases: tuple[float, ...], runs: int, n: int, seed: int = 20261201) -> dict[float, float]:
    """Share of seeded runs in which an annotator of each bias strength is flagged."""
    rng = np.random.default_rng(seed)
    rates: dict[float, float] = {}
    for bias in biases:
        flags = 0
        for _ in range(runs):
            preferred, first = biased_annotator(rng, n=n, bias=bias)
            result = position_bias(first_preferred(preferred, first), np.zeros(n, dtype=np.int64), 1)
            flags += int(result.flagged[0])
        rates[bias] = flags / runs
    return rates


@dataclass(frozen=True)
class Overlap:
    n_items: int = 400
    k: int = 4  # labels per item under the uniform design; the adaptive one starts from k − 1
    cap: int = 4  # extra labels per item at most (adaptive)
    #: "difficulty": items differ in how hard they are to judge, independently of how close the truth is; label
    #: noise and hesitation both grow with difficulty. "closeness": noise and hesitation grow as |θ| shrinks, so the
    #: hesitant items are the near-ties, whose sign is a coin flip however many labels they get.
    world: str = "closeness"
    close_share: float = 0.4
    hesitation: float = 0.4
    dispute: float = 0.6
    by_margin: bool = True
    batch: float = 0.05  # share of the items that may get a label per round
    seed: int = 7


def _items(rng: np.random.Generator, setup: Overlap) -> tuple[np.ndarray, np.ndarray]:
    """(θ, difficulty ∈ [0, 1]) per item."""
    if setup.world == "difficulty":
        return rng.uniform(-1.0, 1.0, setup.n_items), rng.beta(0.7, 1.5, setup.n_items)
    close = rng.random(setup.n_items) < setup.close_share
    clear = rng.choice([-1, 1], setup.n_items) * rng.uniform(0.3, 1.0, setup.n_items)
    theta = np.where(close, rng.uniform(-0.25, 0.25, setup.n_items), clear)
    return theta, 1.0 - np.abs(theta)


def _label(rng: np.random.Generator, theta: np.ndarray, difficulty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(signed preference s, hesitation π) of one new label per given item."""
    s = np.clip(theta + rng.normal(0.0, 0.25 + 0.45 * difficulty), -1.0, 1.0)
    pi = np.clip(0.6 * difficulty + rng.normal(0.0, 0.1, theta.size), 0.0, 1.0 - np.abs(s))
    return s, pi


def _aggregate(labels: list[list[tuple[float, float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean s, mean π, agreement) per item; agreement = 1 − mean pairwise |s_i − s_j| / 2 (1 with one label)."""
    mean_s, mean_pi, agree = [], [], []
    for item in labels:
        s = np.array([v[0] for v in item])
        mean_s.append(s.mean())
        mean_pi.append(np.mean([v[1] for v in item]))
        if s.size < 2:
            agree.append(1.0)
        else:
            d = np.abs(s[:, None] - s[None, :])[np.triu_indices(s.size, 1)]
            agree.append(1.0 - d.mean() / 2.0)
    return np.array(mean_s), np.array(mean_pi), np.array(agree)


def _errors(theta: np.ndarray, mean_s: np.ndarray) -> tuple[float, float]:
    decided = theta != 0
    wrong = np.sign(mean_s[decided]) != np.sign(theta[decided])
    return float(wrong.mean()), float(np.abs(mean_s - theta).mean())


def overlap_run(setup: Overlap, seed: int) -> dict[str, float]:
    """Sign error and mean absolute error of uniform and adaptive designs with the same total number of labels."""
    rng = np.random.default_rng(seed)
    theta, difficulty = _items(rng, setup)
    budget_total = setup.n_items * setup.k

    uniform: list[list[tuple[float, float]]] = [[] for _ in range(setup.n_items)]
    for _ in range(setup.k):
        s, pi = _label(rng, theta, difficulty)
        for i in range(setup.n_items):
            uniform[i].append((s[i], pi[i]))

    adaptive: list[list[tuple[float, float]]] = [[] for _ in range(setup.n_items)]
    for _ in range(setup.k - 1):
        s, pi = _label(rng, theta, difficulty)
        for i in range(setup.n_items):
            adaptive[i].append((s[i], pi[i]))
    budget = budget_total - setup.n_items * (setup.k - 1)
    given = np.zeros(setup.n_items, dtype=np.int64)
    while budget > 0:
        mean_s, mean_pi, agree = _aggregate(adaptive)
        counts = np.array([len(item) for item in adaptive])
        plan = allocate(
            mean_pi,
            agree,
            counts,
            given,
            cap=setup.cap,
            budget=budget,
            hesitation_threshold=setup.hesitation,
            dispute_threshold=setup.dispute,
            margin=mean_s if setup.by_margin else None,
            batch=max(1, int(setup.batch * setup.n_items)),
        )
        if plan.spent == 0:
            break
        chosen = np.flatnonzero(plan.extra)
        s, pi = _label(rng, theta[chosen], difficulty[chosen])
        for j, i in enumerate(chosen):
            adaptive[i].append((s[j], pi[j]))
        given[chosen] += 1
        budget -= plan.spent
    # Whatever the rule left unspent goes to the items with the fewest labels, so both designs spend the same.
    while budget > 0:
        counts = np.array([len(item) for item in adaptive])
        chosen = np.argsort(counts, kind="stable")[:budget]
        s, pi = _label(rng, theta[chosen], difficulty[chosen])
        for j, i in enumerate(chosen):
            adaptive[i].append((s[j], pi[j]))
        budget -= chosen.size

    assert sum(len(item) for item in adaptive) == sum(len(item) for item in uniform) == budget_total
    u_sign, u_abs = _errors(theta, _aggregate(uniform)[0])
    a_sign, a_abs = _errors(theta, _aggregate(adaptive)[0])
    return {"uniform_sign": u_sign, "adaptive_sign": a_sign, "uniform_abs": u_abs, "adaptive_abs": a_abs}


def overlap_runs(setup: Overlap, runs: int) -> dict[str, np.ndarray]:
    rows = [overlap_run(setup, setup.seed + r) for r in range(runs)]
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 200
    print(f"Position bias: share of {runs} seeded runs flagged (Wilson 95 %, flag when the interval excludes 0.5)")
    biases = (0.0, 0.05, 0.1, 0.2, 0.3)
    print("judgments  " + "  ".join(f"bias {b:<4}" for b in biases))
    for n in (30, 100, 300):
        rates = flag_rates(biases=biases, runs=runs, n=n)
        print(f"{n:>9}  " + "  ".join(f"{rates[b]:>9.3f}" for b in biases))
    overlap_runs_n = max(runs // 4, 10)
    for world in ("closeness", "difficulty"):
        setup = Overlap(world=world)
        result = overlap_runs(setup, overlap_runs_n)
        print(
            f"\nAdaptive overlap vs uniform at equal budget, {world} world ({setup.n_items} items × {setup.k} labels, "
            f"cap {setup.cap}, {overlap_runs_n} runs): mean (sd) over runs"
        )
        for metric, name in (("sign", "wrong preference"), ("abs", "mean |s̄ − θ|")):
            u, a = result[f"uniform_{metric}"], result[f"adaptive_{metric}"]
            d = a - u
            t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
            print(
                f"{name:>17}: uniform {u.mean():.4f} ({u.std():.4f})  adaptive {a.mean():.4f} ({a.std():.4f})  "
                f"ratio {a.mean() / u.mean():.3f}  paired t {t:+.1f}  adaptive better in {np.mean(a < u):.0%} of runs"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
