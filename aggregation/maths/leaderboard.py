"""A model leaderboard from pairwise preferences: Bradley-Terry strengths with ties (Davidson 1970), the win-rate
matrix they imply, and intervals clustered by item. Pure numpy, no Django.

**Data.** One comparison per label of a pair of responses written by two different models: the item it belongs to
(the cluster), the two models, the outcome (the first model won, tie, the second won) and a weight. Several labels of
one item share its prompt and its two answers, so they are not independent: every variance here sums the
log-likelihood's score over an item's comparisons before squaring (the cluster-robust "sandwich" variance of a
maximum-likelihood estimate; Freedman 2006, Cameron and Miller 2015), with the small-sample factor K/(K − 1) and a
t quantile on K − 1 degrees of freedom for K items.

**Model (Davidson 1970).** With strengths θ (log scale, centred: Σθ = 0) and a tie parameter ν ≥ 0, for models a and b
with u = (θ_a − θ_b)/2 and Z = e^u + e^−u + ν:

    P(a ≻ b) = e^u / Z,   P(tie) = ν / Z,   P(b ≻ a) = e^−u / Z.

ν = 0 is Bradley-Terry (P(a ≻ b) = logistic(θ_a − θ_b)); with ``ties="none"`` ties are split as half a win each and
ν is not fitted, which is the plain BT likelihood with fractional outcomes. The log-likelihood is concave in
(θ, log ν) (log Z is a log-sum-exp of linear functions), so Newton's method with step halving finds the maximum.
``prior`` adds a Gaussian penalty prior·Σθ² (choix's ``alpha``) that keeps a model which never lost finite; the
project's default is :data:`DEFAULT_PRIOR` and 0 is the plain maximum-likelihood fit (finite when every model has won
and lost against the others, directly or through a chain; choix with ``alpha=0`` then agrees to 1e-6).

**Style control** (Chatbot Arena, 2024): ``covariates`` holds, per comparison, the difference of the two answers'
style features (:mod:`aggregation.maths.style`), entering as u = (θ_a − θ_b + γ·z)/2. The strengths are then what
each model would score against another whose answers look the same, and γ is the size of each style effect (with its
clustered interval): how much a longer or more formatted answer wins by itself.

**Win rate** of a over b: W_ab = P(a ≻ b) + P(tie)/2, the probability that a's answer is preferred with a tie as half.
Its interval is the delta method on logit W (so it stays inside (0, 1)); a strength's interval is the Wald one on
the centred θ. Coverage of both is checked by simulation (tests/maths/conclusions_simulation.py).

**Signed preferences and hesitation.** Every label reaches the leaderboard through its signed preference s ∈ [−1, 1]
(:mod:`aggregation.maths.signed`; +1 = the first response preferred): |s| below the tie band is a tie, otherwise a win
for the side s favours. An IFS label also carries hesitation π̄ (the mean π of its two responses): it enters with weight
1 − π̄, so a fully hesitant label (which is also s = 0) counts for nothing and a confident one fully. Binary and
Likert labels record no hesitation and weigh 1. The weights change what is estimated, from "the share of labels" to
"the share of conviction", which is the quantity an IFS project asks for; :func:`comparisons_from_signed` with
``hesitation=None`` gives the unweighted figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from aggregation.maths.intervals import t_quantile

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Ties = Literal["davidson", "none"]

#: Outcome codes of a comparison, from the first model's side.
WIN, TIE, LOSS = 1, 0, -1
#: The default prior: as strong as a hundredth of a comparison, enough to keep an unbeaten model finite.
DEFAULT_PRIOR = 0.01


@dataclass(frozen=True)
class Comparisons:
    """Comparisons as parallel arrays: cluster (item) index, the two models, the outcome and the weight."""

    item: IntArray
    first: IntArray
    second: IntArray
    outcome: IntArray  # WIN, TIE or LOSS for ``first``
    weight: FloatArray
    # Per comparison, the style differences of the two answers (first − second), for style control; or None.
    covariates: FloatArray | None = None

    def __len__(self) -> int:
        return int(self.item.size)

    def subset(self, keep: ArrayLike) -> Comparisons:
        k = np.asarray(keep)
        z = None if self.covariates is None else self.covariates[k]
        return Comparisons(self.item[k], self.first[k], self.second[k], self.outcome[k], self.weight[k], z)

    def regrouped(self, item: ArrayLike, first: ArrayLike, second: ArrayLike) -> Comparisons:
        """The same comparisons with other cluster and model indices (a subset's models renumbered, say)."""
        i, a, b = (np.asarray(x, dtype=np.int64) for x in (item, first, second))
        return Comparisons(i, a, b, self.outcome, self.weight, self.covariates)


def comparisons_from_signed(
    item: ArrayLike,
    first: ArrayLike,
    second: ArrayLike,
    signed: ArrayLike,
    *,
    tie_band: float,
    hesitation: ArrayLike | None = None,
    covariates: ArrayLike | None = None,
) -> Comparisons:
    """Comparisons from signed preferences (module docstring): |s| < ``tie_band`` is a tie, else a win for the side
    s favours; weight 1 − ``hesitation`` (clipped to [0, 1]) when given, else 1. Rows with NaN s, the same model on
    both sides or zero weight are left out: they say nothing about two models."""
    i = np.asarray(item, dtype=np.int64).ravel()
    a = np.asarray(first, dtype=np.int64).ravel()
    b = np.asarray(second, dtype=np.int64).ravel()
    s = np.asarray(signed, dtype=np.float64).ravel()
    if not i.shape == a.shape == b.shape == s.shape:
        raise ValueError("item, first, second and signed need one entry per label")
    if np.any(np.abs(s[~np.isnan(s)]) > 1.0 + 1e-9):
        raise ValueError("signed preferences must lie in [-1, 1]")
    if tie_band < 0:
        raise ValueError("tie_band must not be negative")
    w = np.ones(s.size) if hesitation is None else 1.0 - np.clip(np.asarray(hesitation, dtype=np.float64).ravel(), 0, 1)
    if w.shape != s.shape:
        raise ValueError("hesitation needs one entry per label")
    outcome = np.where(np.abs(s) < tie_band, TIE, np.where(s > 0, WIN, LOSS)).astype(np.int64)
    keep = ~np.isnan(s) & (a != b) & (a >= 0) & (b >= 0) & (w > 0)
    z = _covariates(covariates, s.size)
    return Comparisons(
        i[keep], a[keep], b[keep], outcome[keep], w[keep].astype(np.float64), None if z is None else z[keep]
    )


@dataclass(frozen=True)
class Fit:
    """A fitted leaderboard. ``strength`` is centred (Σθ = 0); ``covariance`` is the clustered covariance of the
    centred strengths; ``tie`` is ν (0 when ties are split); intervals at ``level``."""

    strength: FloatArray  # (M,)
    strength_ci: FloatArray  # (M, 2)
    covariance: FloatArray  # (M, M)
    tie: float
    win_rate: FloatArray  # (M, M), NaN on the diagonal
    win_rate_ci: FloatArray  # (M, M, 2)
    mean_win_rate: FloatArray  # (M,) against the others, each weighing the same
    mean_win_rate_ci: FloatArray  # (M, 2)
    comparisons: int
    items: int
    level: float
    ties: Ties
    iterations: int
    # The covariates' coefficients γ (Q,) and their intervals (Q, 2); empty without style control.
    style: FloatArray = field(default_factory=lambda: np.zeros(0))
    style_ci: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))


def _outcome_parts(outcome: IntArray, ties: Ties) -> tuple[FloatArray, FloatArray, FloatArray]:
    win = (outcome == WIN).astype(np.float64)
    loss = (outcome == LOSS).astype(np.float64)
    tie = (outcome == TIE).astype(np.float64)
    if ties == "none":
        return win + tie / 2, np.zeros_like(tie), loss + tie / 2
    return win, tie, loss


def _probabilities(u: FloatArray, eta: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """P(first wins), P(tie), P(second wins) at half-differences u and log ν = eta (−inf: no ties), stably."""
    top = np.maximum(np.abs(u), eta if np.isfinite(eta) else -np.inf)
    ea, eb = np.exp(u - top), np.exp(-u - top)
    et = np.exp(eta - top) if np.isfinite(eta) else np.zeros_like(u)
    z = ea + eb + et
    return ea / z, et / z, eb / z


def _design(comparisons: Comparisons, n_models: int, covariates: FloatArray | None = None) -> FloatArray:
    """u = X φ for φ = (θ_1, …, θ_{M−1}[, γ]): θ_0 is pinned to 0 during the fit (the strengths are centred after)."""
    x = np.zeros((len(comparisons), n_models))
    rows = np.arange(len(comparisons))
    np.add.at(x, (rows, comparisons.first), 0.5)
    np.add.at(x, (rows, comparisons.second), -0.5)
    if covariates is None:
        return x[:, 1:]
    return np.column_stack([x[:, 1:], covariates / 2])


def _scores(
    x: FloatArray, phi: FloatArray, eta: float, ya: FloatArray, yt: FloatArray, yb: FloatArray, fit_tie: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per-comparison log-likelihood, score rows (∂ℓ/∂(φ, η)) and the summed Hessian, unweighted per row."""
    u = x @ phi
    pa, pt, pb = _probabilities(u, eta)
    loglik = ya * np.log(np.maximum(pa, 1e-300)) + yb * np.log(np.maximum(pb, 1e-300))
    if fit_tie:
        loglik = loglik + yt * np.log(np.maximum(pt, 1e-300))
    du = (ya - yb) - (pa - pb) * (ya + yb + yt)
    duu = -((pa + pb) - (pa - pb) ** 2) * (ya + yb + yt)
    grad_rows = x * du[:, None]
    if not fit_tie:
        return loglik, grad_rows, duu
    deta = yt - pt * (ya + yb + yt)
    return (
        loglik,
        np.column_stack([grad_rows, deta]),
        np.column_stack([duu, (pa - pb) * pt * (ya + yb + yt), -pt * (1 - pt) * (ya + yb + yt)]),
    )


def _hessian(x: FloatArray, parts: FloatArray, w: FloatArray, fit_tie: bool) -> FloatArray:
    if not fit_tie:
        return np.asarray((x * (w * parts)[:, None]).T @ x)
    duu, due, dee = parts[:, 0], parts[:, 1], parts[:, 2]
    p = x.shape[1]
    h = np.zeros((p + 1, p + 1))
    h[:p, :p] = (x * (w * duu)[:, None]).T @ x
    h[:p, p] = h[p, :p] = x.T @ (w * due)
    h[p, p] = float(w @ dee)
    return h


def fit(
    comparisons: Comparisons,
    n_models: int,
    *,
    ties: Ties = "davidson",
    prior: float = DEFAULT_PRIOR,
    level: float = 0.95,
    max_iter: int = 200,
    tol: float = 1e-10,
    covariates: ArrayLike | None = None,
) -> Fit:
    """The penalised maximum-likelihood leaderboard of ``n_models`` models (module docstring); with ``covariates``
    (one row of style differences per comparison) the style-controlled one."""
    if n_models < 2:
        raise ValueError("a leaderboard needs at least two models")
    if len(comparisons) == 0:
        raise ValueError("no comparisons between two different models")
    if np.any((comparisons.first >= n_models) | (comparisons.second >= n_models)):
        raise ValueError("a comparison names a model index outside 0..n_models-1")
    if prior < 0:
        raise ValueError("prior must not be negative")
    w = comparisons.weight
    ya, yt, yb = _outcome_parts(comparisons.outcome, ties)
    fit_tie = ties == "davidson" and float(w @ yt) > 0
    z = _covariates(covariates, len(comparisons))
    x = _design(comparisons, n_models, z)
    p_theta = n_models - 1
    p = x.shape[1]
    phi = np.zeros(p)
    eta = math.log(max(2.0 * float(w @ yt) / max(float(w @ (ya + yb)), 1e-12), 1e-6)) if fit_tie else -math.inf
    # The penalty is on the centred strengths, as choix's is on its (mean-free at the optimum) parameters; the style
    # coefficients are not penalised.
    centre = np.eye(n_models) - 1.0 / n_models
    c = centre[:, 1:]
    penalty = np.zeros((p, p))
    penalty[:p_theta, :p_theta] = 2.0 * prior * (c.T @ c)

    def objective(phi_: FloatArray, eta_: float) -> float:
        loglik, _, _ = _scores(x, phi_, eta_, ya, yt, yb, fit_tie)
        return float(w @ loglik) - prior * float(np.sum((c @ phi_[:p_theta]) ** 2))

    current = objective(phi, eta)
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count is reported in Fit)
        _, rows, parts = _scores(x, phi, eta, ya, yt, yb, fit_tie)
        grad = rows.T @ w
        hess = _hessian(x, parts, w, fit_tie)
        grad[:p] -= penalty @ phi
        hess[:p, :p] -= penalty
        step = np.linalg.lstsq(-hess, grad, rcond=None)[0]
        scale = 1.0
        while True:
            phi_new = phi + scale * step[:p]
            eta_new = eta + scale * float(step[p]) if fit_tie else eta
            new = objective(phi_new, eta_new)
            if new >= current - 1e-12 or scale < 1e-8:
                break
            scale /= 2
        phi, eta, improvement, current = phi_new, eta_new, new - current, new
        if abs(improvement) < tol and float(np.max(np.abs(scale * step))) < 1e-9:
            break

    _, rows, parts = _scores(x, phi, eta, ya, yt, yb, fit_tie)
    hess = _hessian(x, parts, w, fit_tie)
    hess[:p, :p] -= penalty
    clusters, cluster = np.unique(comparisons.item, return_inverse=True)
    k = clusters.size
    per_cluster = np.zeros((k, rows.shape[1]))
    np.add.at(per_cluster, cluster, rows * w[:, None])
    meat = per_cluster.T @ per_cluster * (k / max(k - 1, 1))
    bread = np.linalg.pinv(-hess)
    cov_params = bread @ meat @ bread
    theta = c @ phi[:p_theta]
    cov_theta = c @ cov_params[:p_theta, :p_theta] @ c.T
    tq = t_quantile(level, max(k - 1, 1))
    se = np.sqrt(np.maximum(np.diag(cov_theta), 0.0))
    strength_ci = np.column_stack([theta - tq * se, theta + tq * se])
    nu = math.exp(eta) if fit_tie else 0.0
    # The win rates are between answers of the same style: the strengths' block and ν's, without γ's.
    kept = [*range(p_theta), *([p] if fit_tie else [])]
    win, win_ci, mean_win, mean_ci = _win_rates(theta, eta, fit_tie, c, cov_params[np.ix_(kept, kept)], tq)
    style = phi[p_theta:]
    style_se = np.sqrt(np.maximum(np.diag(cov_params)[p_theta:p], 0.0))
    style_ci = np.column_stack([style - tq * style_se, style + tq * style_se])
    return Fit(
        theta,
        strength_ci,
        cov_theta,
        nu,
        win,
        win_ci,
        mean_win,
        mean_ci,
        len(comparisons),
        k,
        level,
        ties,
        iterations,
        style,
        style_ci,
    )


def _covariates(covariates: ArrayLike | None, rows: int) -> FloatArray | None:
    if covariates is None:
        return None
    z = np.asarray(covariates, dtype=np.float64)
    z = z.reshape(rows, -1) if z.ndim < 2 else z
    if z.shape[0] != rows or not np.all(np.isfinite(z)):
        raise ValueError("covariates need one finite row per comparison")
    return z


def win_rate(theta_a: float, theta_b: float, tie: float) -> float:
    """W_ab = P(a ≻ b) + P(tie)/2 under the Davidson model (ν = ``tie``; 0 is Bradley-Terry)."""
    u = (theta_a - theta_b) / 2
    return (math.exp(u) + tie / 2) / (math.exp(u) + math.exp(-u) + tie)


def _logit_interval(value: FloatArray, gradient: FloatArray, cov: FloatArray, tq: float) -> FloatArray:
    """Delta-method interval on logit(value) for values with the given gradients (…, P) and covariance (P, P)."""
    var = np.einsum("...i,ij,...j->...", gradient, cov, gradient)
    v = np.clip(value, 1e-12, 1 - 1e-12)
    se = np.sqrt(np.maximum(var, 0.0)) / (v * (1 - v))
    centre = np.log(v / (1 - v))
    return np.stack([1 / (1 + np.exp(-(centre - tq * se))), 1 / (1 + np.exp(-(centre + tq * se)))], axis=-1)


def _win_rates(
    theta: FloatArray, eta: float, fit_tie: bool, c: FloatArray, cov_params: FloatArray, tq: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    m = theta.size
    p = m - 1
    nu = math.exp(eta) if fit_tie else 0.0
    u = (theta[:, None] - theta[None, :]) / 2
    z = np.exp(u) + np.exp(-u) + nu
    win = (np.exp(u) + nu / 2) / z
    # dW/du and dW/dη, then du/dφ = (c_a − c_b)/2.
    dw_du = (np.exp(u) * z - (np.exp(u) + nu / 2) * (np.exp(u) - np.exp(-u))) / z**2
    dw_deta = ((nu / 2) * z - (np.exp(u) + nu / 2) * nu) / z**2
    du_dphi = (c[:, None, :] - c[None, :, :]) / 2  # (M, M, P)
    grad = dw_du[..., None] * du_dphi
    if fit_tie:
        grad = np.concatenate([grad, dw_deta[..., None]], axis=-1)
    cov = cov_params if fit_tie else cov_params[:p, :p]
    win_ci = _logit_interval(win, grad, cov, tq)
    off = ~np.eye(m, dtype=bool)
    win = np.where(off, win, np.nan)
    win_ci[~off] = np.nan
    mean_win = np.nansum(win, axis=1) / (m - 1)
    mean_grad = np.where(off[..., None], grad, 0.0).sum(axis=1) / (m - 1)
    mean_ci = _logit_interval(mean_win, mean_grad, cov, tq)
    return win, win_ci, mean_win, mean_ci


def observed_win_rates(comparisons: Comparisons, n_models: int) -> tuple[FloatArray, FloatArray]:
    """The empirical matrix: weighted share of comparisons of a against b that a won (a tie as half), and the
    weighted number of comparisons behind each cell (NaN where none)."""
    wins = np.zeros((n_models, n_models))
    total = np.zeros((n_models, n_models))
    credit = np.where(comparisons.outcome == WIN, 1.0, np.where(comparisons.outcome == TIE, 0.5, 0.0))
    w = comparisons.weight
    np.add.at(wins, (comparisons.first, comparisons.second), w * credit)
    np.add.at(wins, (comparisons.second, comparisons.first), w * (1 - credit))
    np.add.at(total, (comparisons.first, comparisons.second), w)
    np.add.at(total, (comparisons.second, comparisons.first), w)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, wins / total, np.nan)
    return share, np.where(total > 0, total, np.nan)


__all__ = [
    "DEFAULT_PRIOR",
    "LOSS",
    "TIE",
    "WIN",
    "Comparisons",
    "Fit",
    "comparisons_from_signed",
    "fit",
    "observed_win_rates",
    "win_rate",
]
