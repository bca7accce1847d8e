"""No worse than a person: the alternative annotator test. Pure numpy, no Django.

Calderon, Reichart and Dror (ACL 2025, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs") ask whether the model could stand in for one of the annotators:
leave annotator j out, and on the items j labelled with at least one other person, ask who agrees better with the
*remaining* people, j or the model. With S(x, i) the share of the other people's labels on item i equal to x,

    W_f(i) = 1[S(model, i) ≥ S(j, i)],   W_h(i) = 1[S(j, i) ≥ S(model, i)],   d_i = W_f(i) − W_h(i),

ρ_f^j = mean W_f and ρ_h^j = mean W_h (the advantage probabilities). The null for annotator j is
H_j: ρ_f^j − ρ_h^j ≤ −ε, the model worse than j by more than the cost-benefit margin ε (the paper's 0.2 for crowd
workers, 0.15 for skilled annotators, 0.1 for experts); it is tested by a one-sided paired t-test of the d_i against
−ε (t = (d̄ + ε) / (s/√n) on n − 1 degrees of freedom). The m per-annotator p-values go through the
Benjamini-Yekutieli procedure at level α (false discovery rate control under any dependence: the annotators share
items; Benjamini and Yekutieli 2001, Ann. Stat. 29(4)), and the *winning rate* ω is the share of annotators whose
null is rejected. The model passes when ω ≥ 0.5: it is not worse than at least half of the people, each by more
than ε, with the false discovery rate held at α.

**Assumptions checked** (:func:`alt_test`): at least ``min_annotators`` (3, the paper's minimum) annotators each
with at least ``min_items`` (30) items shared with another person, all labels blind (the caller passes only labels
given without the model's answer on screen: a person who saw it agrees with it more, which would flatter the model).
Annotators with fewer shared items are left out of the test and counted in the reason; with too few annotators
left the contract is withheld.

tests/maths/contract_simulation.py: a model as good as the people passes, one that errs much more often fails, and
the rate at which a model worse than every person by more than ε passes stays below α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.intervals import t_upper_tail


@dataclass(frozen=True)
class AnnotatorTest:
    annotator: int
    items: int
    rho_model: float
    rho_person: float
    p_value: float
    rejected: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "items": self.items,
            "rho_model": self.rho_model,
            "rho_person": self.rho_person,
            "p_value": self.p_value,
            "rejected": self.rejected,
        }


@dataclass(frozen=True)
class AltTest:
    verdict: str  # "holds", "fails" or "withheld"
    reason: str
    epsilon: float
    alpha: float
    winning_rate: float | None
    advantage: float | None  # the paper's average advantage probability ρ = mean of ρ_f^j
    items: int
    annotators: list[AnnotatorTest] = field(default_factory=list)

    def sentence(self) -> str:
        tested = len(self.annotators)
        wins = sum(a.rejected for a in self.annotators)
        return (
            f"The model is no worse than {wins} of {tested} annotators by more than ε = {self.epsilon:g} at agreeing "
            f"with the other people (alternative annotator test, FDR {self.alpha:.0%}, n = {self.items} items)"
            + (": it can stand in for an annotator." if self.verdict == "holds" else ": fewer than half.")
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": "no_worse_than_human",
            "verdict": self.verdict,
            "reason": self.reason,
            "sentence": self.sentence() if self.verdict != "withheld" else "",
            "n": self.items,
            "epsilon": self.epsilon,
            "alpha": self.alpha,
            "winning_rate": self.winning_rate,
            "advantage": self.advantage,
            "annotators": [a.as_dict() for a in self.annotators],
        }


def benjamini_yekutieli(p_values: ArrayLike, alpha: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR ``alpha``."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool)
    c = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p, kind="stable")
    below = p[order] <= alpha * np.arange(1, m + 1) / (m * c)
    rejected = np.zeros(m, dtype=bool)
    if below.any():
        last = int(np.flatnonzero(below).max())
        rejected[order[: last + 1]] = True
    return rejected


def _paired_p(d: np.ndarray, epsilon: float) -> float:
    """One-sided p of H: mean(d) ≤ −ε by the paired t-test."""
    n = d.size
    shift = float(d.mean()) + epsilon
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0:
        return 0.0 if shift > 0 else 1.0
    return t_upper_tail(shift / (sd / math.sqrt(n)), n - 1)


def alt_test(
    labels: ArrayLike,
    model: ArrayLike,
    *,
    epsilon: float = 0.2,
    alpha: float = 0.05,
    min_items: int = 30,
    min_annotators: int = 3,
) -> AltTest:
    """The alternative annotator test (module docstring) on an (items, annotators) array of blind categorical labels
    (NaN: not labelled) and the model's label per item."""
    x = np.asarray(labels, dtype=np.float64)
    f = np.asarray(model, dtype=np.float64).ravel()
    if x.ndim != 2 or x.shape[0] != f.size:
        raise ValueError("labels must be (items, annotators) with one model label per item")
    if not 0 <= epsilon < 1 or not 0 < alpha < 1:
        raise ValueError("epsilon must lie in [0, 1) and alpha in (0, 1)")
    present = ~np.isnan(x)
    # Per item and category: how many people gave it. S(·) of the others is then (count − own) / (labels − 1).
    per_item = present.sum(axis=1)
    tests: list[tuple[int, np.ndarray, float, float]] = []
    short = 0
    for j in range(x.shape[1]):
        rows = present[:, j] & (per_item >= 2) & ~np.isnan(f)
        n = int(rows.sum())
        if n == 0:
            continue
        if n < min_items:
            short += 1
            continue
        others = present[rows] & (np.arange(x.shape[1]) != j)[None, :]
        xs = x[rows]
        s_model = np.sum(others & (xs == f[rows][:, None]), axis=1) / others.sum(axis=1)
        s_person = np.sum(others & (xs == xs[:, j][:, None]), axis=1) / others.sum(axis=1)
        w_f = (s_model >= s_person).astype(np.float64)
        w_h = (s_person >= s_model).astype(np.float64)
        tests.append((j, w_f - w_h, float(w_f.mean()), float(w_h.mean())))
    items = int(((per_item >= 2) & ~np.isnan(f)).sum())
    left_out = f"; {short} with fewer than {min_items} shared items left out" if short else ""
    if len(tests) < min_annotators:
        reason = (
            f"{len(tests)} annotators with at least {min_items} blind items shared with another person; "
            f"the test needs {min_annotators}"
        )
        return AltTest("withheld", reason, epsilon, alpha, None, None, items)
    p = np.array([_paired_p(d, epsilon) for _, d, _, _ in tests])
    rejected = benjamini_yekutieli(p, alpha)
    results = [
        AnnotatorTest(j, int(d.size), rf, rh, float(pv), bool(r))
        for (j, d, rf, rh), pv, r in zip(tests, p, rejected, strict=True)
    ]
    omega = float(rejected.mean())
    advantage = float(np.mean([r.rho_model for r in results]))
    verdict = "holds" if omega >= 0.5 else "fails"
    reason = f"winning rate ω = {omega:.2f} over {len(results)} annotators{left_out}"
    return AltTest(verdict, reason, epsilon, alpha, omega, advantage, items, results)


__all__ = ["AltTest", "AnnotatorTest", "alt_test", "benjamini_yekutieli"]
