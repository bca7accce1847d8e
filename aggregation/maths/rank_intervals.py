"""Simultaneous intervals for each model's rank on a leaderboard. Pure numpy, no Django.

A model's rank is 1 + the number of models stronger than it. With the fitted strengths θ and their clustered
covariance Σ (:class:`aggregation.maths.leaderboard.Fit`), every pairwise difference θ_i − θ_j gets an interval
θ_i − θ_j ± c·se_ij where c is the max-|t| critical value over all M(M − 1)/2 pairs at once: the (``level``) quantile of
max_{i<j} |Z_i − Z_j| / se_ij for Z ~ N(0, Σ), found by simulation (Hothorn, Bretz and Westfall 2008). Then, with
that probability for all pairs together, model i is beaten by at least the models whose difference interval lies
wholly above it and by at most those whose interval does not lie wholly below, so its rank lies in

    [1 + #{j: θ_j − θ_i − c·se > 0},  M − #{j: θ_i − θ_j − c·se > 0}].

The intervals hold simultaneously for every model (a family-wise level), which is what "rank 2–4" in a published
table claims; per-model intervals would be narrower and cover less than ``level`` together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class RankIntervals:
    rank: IntArray  # (M,) by the point strengths, 1 = strongest (ties share the better rank)
    lower: IntArray  # (M,) best rank the data allow
    upper: IntArray  # (M,) worst rank the data allow
    critical: float  # c, the simultaneous critical value
    level: float


def max_t_critical(covariance: FloatArray, *, level: float, draws: int = 20_000, seed: int = 0) -> float:
    """The ``level`` quantile of the largest |standardised pairwise difference| for Z ~ N(0, covariance)."""
    m = covariance.shape[0]
    first, second = np.triu_indices(m, k=1)
    variance = covariance[first, first] + covariance[second, second] - 2 * covariance[first, second]
    se = np.sqrt(np.maximum(variance, 1e-300))
    rng = np.random.default_rng(seed)
    # A symmetric square root: Σ may be singular (the strengths are centred), where Cholesky fails.
    values, vectors = np.linalg.eigh((covariance + covariance.T) / 2)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    z = rng.standard_normal((draws, m)) @ root.T
    largest = np.max(np.abs(z[:, first] - z[:, second]) / se, axis=1)
    return float(np.quantile(largest, level))


def rank_intervals(
    strength: FloatArray, covariance: FloatArray, *, level: float = 0.95, draws: int = 20_000, seed: int = 0
) -> RankIntervals:
    """Simultaneous rank intervals (module docstring) from centred strengths and their covariance."""
    theta = np.asarray(strength, dtype=np.float64)
    cov = np.asarray(covariance, dtype=np.float64)
    m = theta.size
    if cov.shape != (m, m):
        raise ValueError("covariance must be M × M for M strengths")
    if m < 2:
        raise ValueError("ranks need at least two models")
    critical = max_t_critical(cov, level=level, draws=draws, seed=seed)
    variance = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    margin = critical * np.sqrt(np.maximum(variance, 0.0))
    difference = theta[:, None] - theta[None, :]  # θ_i − θ_j
    surely_above = difference - margin > 0  # i surely stronger than j
    np.fill_diagonal(surely_above, False)
    rank = 1 + np.sum(theta[None, :] > theta[:, None], axis=1).astype(np.int64)
    lower = 1 + surely_above.sum(axis=0).astype(np.int64)  # models surely stronger than j, for column j
    upper = m - surely_above.sum(axis=1).astype(np.int64)
    return RankIntervals(rank=rank, lower=lower, upper=upper, critical=critical, level=level)


__all__ = ["RankIntervals", "max_t_critical", "rank_intervals"]
