"""Distributional contract for IFS projects: the model's (μ, ν) per response against the people's, beside the human
noise ceiling. Pure numpy, no Django.

An IFS project keeps each person's support μ, opposition ν and hesitation π = 1 − μ − ν per response, so the
people's judgment of an item is a distribution, not a vote, and a model that states (μ, ν) can be compared with it
value by value. The distance is Szmidt and Kacprzyk's normalised Euclidean distance with hesitation
(:func:`aggregation.maths.ifs.distance`, 2000, "Distances between intuitionistic fuzzy sets", Fuzzy Sets and Systems
114(3)), averaged over the item's responses: a proper metric on IFS values that counts a difference in hesitation,
which a distance on μ − ν alone would not see.

**Noise ceiling from split halves.** People disagree with each other, so no model can be at distance 0 from any one
group of them. Each item's people are split at random into two halves A and B (seeded, so the figure is
reproducible); the *ceiling* is D_human(i) = d(mean A, mean B), how far one half of the people is from the other,
and the model's distance is D_model(i) = ½[d(model, mean A) + d(model, mean B)], the model against a half of the
same size. Split-half reliability is the usual noise ceiling of neural and behavioural data (Lage-Castellanos et al.
2019, "Methods for computing the maximum performance of computational models of fMRI responses", PLoS Comput.
Biol. 15(3)); here it is a distance, so lower is better and a model at the people's mean sits below the ceiling.

**Contract**: with Δ_i = D_model(i) − D_human(i) over the n items with at least two people's blind values, the
one-sided 95 % upper bound Δ̄ + t_{n−1} s/√n (items drawn at random, the t interval of a mean) must be at most the
``margin``: "the model's (μ, ν) are no farther from a group of people than another group of people is, up to the
margin". Withheld with the reason when fewer than ``min_items`` items have two people's values.

tests/maths/contract_simulation.py: a model at the people's mean passes, one shifted by 0.2 in μ fails, and one
just outside the margin passes at most 5 % of the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from aggregation.maths.ifs import distance
from aggregation.maths.intervals import t_quantile


@dataclass(frozen=True)
class Distributional:
    verdict: str  # "holds", "fails" or "withheld"
    reason: str
    margin: float
    items: int
    model_distance: float | None
    ceiling: float | None
    upper: float | None  # one-sided 95 % upper bound of the mean of D_model − D_human

    def sentence(self) -> str:
        verb = "are" if self.verdict == "holds" else "are not shown to be"
        return (
            f"The model's (μ, ν) {verb} within {self.margin:g} of the human noise ceiling: mean distance "
            f"{self.model_distance:.3f} to half of the people against {self.ceiling:.3f} between two halves "
            f"(Szmidt-Kacprzyk, 95 % upper bound of the excess {self.upper:.3f}, n = {self.items} items)."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": "distributional",
            "verdict": self.verdict,
            "reason": self.reason,
            "sentence": self.sentence() if self.verdict != "withheld" else "",
            "n": self.items,
            "margin": self.margin,
            "model_distance": self.model_distance,
            "ceiling": self.ceiling,
            "upper": self.upper,
        }


def _half_means(mu: np.ndarray, nu: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.nanmean(mu[rows], axis=0), np.nanmean(nu[rows], axis=0)


def distributional(
    people_mu: ArrayLike,
    people_nu: ArrayLike,
    model_mu: ArrayLike,
    model_nu: ArrayLike,
    *,
    margin: float = 0.05,
    min_items: int = 30,
    seed: int = 0,
) -> Distributional:
    """The contract (module docstring) from (items, annotators, responses) arrays of people's blind μ and ν in [0, 1]
    (NaN: no value) and (items, responses) arrays of the model's."""
    pm = np.asarray(people_mu, dtype=np.float64)
    pn = np.asarray(people_nu, dtype=np.float64)
    mm = np.asarray(model_mu, dtype=np.float64)
    mn = np.asarray(model_nu, dtype=np.float64)
    if pm.ndim != 3 or pm.shape != pn.shape or mm.shape != mn.shape or mm.shape != (pm.shape[0], pm.shape[2]):
        raise ValueError("people's values must be (items, annotators, responses) and the model's (items, responses)")
    if margin < 0:
        raise ValueError("margin must be non-negative")
    rng = np.random.default_rng(seed)
    diffs, model_d, human_d = [], [], []
    for i in range(pm.shape[0]):
        people = np.flatnonzero(~np.isnan(pm[i]).all(axis=1) & ~np.isnan(pn[i]).all(axis=1))
        if people.size < 2 or np.isnan(mm[i]).all():
            continue
        people = rng.permutation(people)
        half = people.size // 2
        a_mu, a_nu = _half_means(pm[i], pn[i], people[:half])
        b_mu, b_nu = _half_means(pm[i], pn[i], people[half:])
        ok = ~(np.isnan(a_mu) | np.isnan(b_mu) | np.isnan(mm[i]) | np.isnan(mn[i]))
        if not ok.any():
            continue
        d_ab = float(distance(a_mu[ok], a_nu[ok], b_mu[ok], b_nu[ok], axis=0))
        d_model = 0.5 * float(
            distance(mm[i][ok], mn[i][ok], a_mu[ok], a_nu[ok], axis=0)
            + distance(mm[i][ok], mn[i][ok], b_mu[ok], b_nu[ok], axis=0)
        )
        diffs.append(d_model - d_ab)
        model_d.append(d_model)
        human_d.append(d_ab)
    n = len(diffs)
    if n < min_items:
        reason = f"{n} items with blind (μ, ν) from at least two people; the contract needs {min_items}"
        return Distributional("withheld", reason, margin, n, None, None, None)
    d = np.asarray(diffs)
    upper = float(d.mean() + t_quantile(0.90, n - 1) * d.std(ddof=1) / math.sqrt(n))
    verdict = "holds" if upper <= margin else "fails"
    reason = f"excess over the ceiling {d.mean():.3f}, upper bound {upper:.3f} against the margin {margin:g}"
    return Distributional(verdict, reason, margin, n, float(np.mean(model_d)), float(np.mean(human_d)), upper)


__all__ = ["Distributional", "distributional"]
