"""Prediction-powered estimates of dataset-level figures: the LLM labelled every item, people labelled a random
sample drawn with known inclusion probabilities. Pure numpy, no Django.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic (2023), "Prediction-powered inference", Science 382; and
Angelopoulos, Duchi and Zrnic (2023), "PPI++: efficient prediction-powered inference" (arXiv:2311.01453), whose
power tuning λ makes the estimate never worse than the human-only one in large samples.

**Set-up.** A population of N items (a project's items, or a domain of them such as "the items comparing models a
and b"). The LLM's figure f_i is known on all N. People's figure y_i (the share of an item's human labels preferring
response 0, or their mean signed preference, or a model's win credit) is known on a sample S drawn with inclusion
probabilities π_i (the blind sample, certification, audit: :mod:`aggregation.maths.sampling`). The target is the
population mean of people's figure, θ = (1/N) Σ_i E[y_i | item i]: what the finished dataset would say had people
labelled all of it.

**Estimator** (:func:`ppi_design`). θ̂_λ = λ f̄_N + R̂(y − λf), with f̄_N the LLM's mean over all N items (known
exactly, no sampling error) and R̂ the Hájek mean Σ_S d_i r_i / Σ_S d_i (d_i = 1/π_i) of the rectifier
r_i = y_i − λ f_i. λ = 0 is the human-only estimate; λ = 1 is PPI; λ is tuned to the variance-minimising
Cov(y, f)/Var(f) under the design, clipped to [0, 1] as PPI++ does. With f known on every item this is the survey
statistician's difference estimator (Särndal, Swensson and Wretman 1992, §6.3) with its coefficient estimated: the
interval is valid for any LLM, however biased, because the bias is measured on the human sample and removed; the
LLM only buys precision when f tracks y.

**Variance** as for every design estimate in Penumbra (:mod:`aggregation.maths.accuracy`): the linearised contributions
z_i = d_i (r_i − R̂)/Σd with the stratified with-replacement form times (1 − π_i) for a draw without replacement,
plus the label noise within items, Σ d_i V̂_2i / (Σd)², which no finite-population correction removes (V̂_2i: the
variance of the mean of an item's m_i labels, from their spread; zero for a figure without label noise).
Interval: θ̂ ± t_{df} · se with df = sampled items − strata (Wald: a difference estimate can leave [0, 1] and its
figures are not all shares).

**Effective number of human labels.** n · v_human / v_PPI: how many items a human-only estimate would need for the
PPI estimate's variance. The LLM was worth the difference.

:func:`ppi_mean` is the paper's own estimator (labelled and unlabelled samples, independent and identically
distributed, no design): the reference implementation ``ppi-python`` computes the same numbers
(tests/maths/test_ppi_matches_reference.py), which checks our reading of the formulas; :func:`ppi_design` is the
form Penumbra reports, because its human sample is a designed draw of the very items the LLM labelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.accuracy import with_replacement_variance
from aggregation.maths.intervals import t_quantile

FloatArray = NDArray[np.float64]
Interval = tuple[float, float]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered figure beside the human-only and the LLM-only ones.

    ``effective_labels``: the human-labelled items the human-only estimate would need for the PPI variance.
    """

    value: float
    ci: Interval
    se: float
    human_value: float
    human_ci: Interval
    human_se: float
    llm_value: float
    lam: float
    labelled: int
    population: int
    effective_labels: float
    level: float

    def as_dict(self) -> dict[str, object]:
        return {
            "method": "PPI++ (power-tuned difference estimator, inclusion-weighted)",
            "value": self.value,
            "ci": list(self.ci),
            "human_only": {"value": self.human_value, "ci": list(self.human_ci)},
            "llm_only": self.llm_value,
            "lambda": self.lam,
            "human_labelled_items": self.labelled,
            "items": self.population,
            "effective_human_items": self.effective_labels,
            "level": self.level,
        }


def _design_terms(
    y: FloatArray, f: FloatArray, d: FloatArray, p: FloatArray, strata: NDArray[np.int64]
) -> tuple[float, float, float, float, float]:
    """Hájek means of y and f over the sample and the design (co)variances of their linearised contributions."""
    total = float(d.sum())
    ry, rf = float(d @ y) / total, float(d @ f) / total
    zy, zf = d * (y - ry) / total, d * (f - rf) / total
    vyy = with_replacement_variance(zy, strata, p)
    vff = with_replacement_variance(zf, strata, p)
    # The cross term by polarisation: the variance form is a quadratic form.
    vyf = (with_replacement_variance(zy + zf, strata, p) - vyy - vff) / 2
    return ry, rf, vyy, vff, vyf


def ppi_design(
    y: ArrayLike,
    f_sample: ArrayLike,
    f_population: ArrayLike,
    probability: ArrayLike,
    *,
    within_variance: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    lam: float | None = None,
    level: float = 0.95,
) -> PPIEstimate:
    """The inclusion-weighted PPI++ estimate of the population mean of y (module docstring).

    ``y``, ``f_sample``, ``probability`` (and ``within_variance``, ``strata``): one entry per human-labelled item;
    ``f_population``: the LLM's figure on every item of the population (the sampled ones included). ``lam`` fixes
    λ (0: human-only, 1: plain PPI); None tunes it.
    """
    yv = np.asarray(y, dtype=np.float64).ravel()
    fs = np.asarray(f_sample, dtype=np.float64).ravel()
    fp = np.asarray(f_population, dtype=np.float64).ravel()
    pv = np.asarray(probability, dtype=np.float64).ravel()
    v2 = np.zeros(yv.size) if within_variance is None else np.asarray(within_variance, dtype=np.float64).ravel()
    h = np.zeros(yv.size, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64).ravel()
    if not yv.shape == fs.shape == pv.shape == v2.shape == h.shape:
        raise ValueError("y, f_sample, probability, within_variance and strata need one entry per labelled item")
    if yv.size < 2:
        raise ValueError("a prediction-powered estimate needs at least two human-labelled items")
    if fp.size < yv.size:
        raise ValueError("f_population must hold the LLM's figure on every item, the labelled ones included")
    if np.any(~np.isfinite(yv)) or np.any(~np.isfinite(fs)) or np.any(~np.isfinite(fp)):
        raise ValueError("figures must be finite numbers")
    if np.any((pv <= 0.0) | (pv > 1.0)):
        raise ValueError("every labelled item needs an inclusion probability in (0, 1]")
    if np.any(v2 < 0):
        raise ValueError("within-item variances must not be negative")
    d = 1.0 / pv
    ry, rf, vyy, vff, vyf = _design_terms(yv, fs, d, pv, h)
    within = float(d @ v2) / float(d.sum()) ** 2
    if lam is None:
        lam = min(max(vyf / vff, 0.0), 1.0) if vff > 0 else 0.0
    llm = float(fp.mean())
    value = lam * llm + (ry - lam * rf)
    v_ppi = max(vyy - 2 * lam * vyf + lam**2 * vff, 0.0) + within
    v_human = vyy + within
    df = max(yv.size - np.unique(h).size, 1)
    tq = t_quantile(level, df) if df < 10_000 else NormalDist().inv_cdf(0.5 + level / 2)
    se, se_h = math.sqrt(v_ppi), math.sqrt(v_human)
    effective = yv.size * v_human / v_ppi if v_ppi > 0 else float(yv.size)
    return PPIEstimate(
        value=value,
        ci=(value - tq * se, value + tq * se),
        se=se,
        human_value=ry,
        human_ci=(ry - tq * se_h, ry + tq * se_h),
        human_se=se_h,
        llm_value=llm,
        lam=float(lam),
        labelled=int(yv.size),
        population=int(fp.size),
        effective_labels=float(effective),
        level=level,
    )


def ppi_mean(
    y: ArrayLike, f_labelled: ArrayLike, f_unlabelled: ArrayLike, *, lam: float | None = None, level: float = 0.95
) -> tuple[float, Interval, float]:
    """The paper's PPI++ mean (independent labelled and unlabelled samples, equal weights): estimate, z interval
    and λ. λ̂ = Cov(y, f) / ((1 + n/N) Var(f)) with Var(f) over both samples, clipped to [0, 1]."""
    yv = np.asarray(y, dtype=np.float64).ravel()
    fl = np.asarray(f_labelled, dtype=np.float64).ravel()
    fu = np.asarray(f_unlabelled, dtype=np.float64).ravel()
    if yv.shape != fl.shape:
        raise ValueError("y and f_labelled need one entry per labelled item")
    if yv.size < 2 or fu.size < 2:
        raise ValueError("PPI needs at least two labelled and two unlabelled items")
    n, big_n = yv.size, fu.size
    if lam is None:
        cov = float(np.mean((yv - yv.mean()) * (fl - fl.mean())))
        var = float(np.var(np.concatenate([fl, fu]), ddof=1))
        lam = min(max(cov / ((1 + n / big_n) * var), 0.0), 1.0) if var > 0 else 0.0
    value = float(lam * fu.mean() + np.mean(yv - lam * fl))
    se = math.sqrt(float(np.var(lam * fu)) / big_n + float(np.var(yv - lam * fl)) / n)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return value, (value - z * se, value + z * se), float(lam)


__all__ = ["PPIEstimate", "ppi_design", "ppi_mean"]
