"""The maths benchmark's yardstick: the same steps as the pipeline, in plain numpy from docs/DESIGN.md's formulas.

benchmarks/aggregate.py runs it in the same process on the same data, checks that both give the same figures and
prints the ratio of the pipeline's time to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make the repository's packages and the benchmark's sibling modules importable.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from aggregate_data import TOLERANCE, Dataset, Timing, run_chain

from aggregation.maths import ifs, weights

# --------------------------------------------------------------------------------------------------------------
# The same steps as plain numpy: the obvious vectorised code written from docs/DESIGN.md's formulas, without the
# pipeline's tricks (no in-place scratch blocks, no annotator-first layouts, no closed-form leave-one-out, no
# compaction). It is the yardstick the pipeline must not be slower than, run in the same process on the same data.


def _plain_preferred(scores: np.ndarray, tolerance: float) -> np.ndarray:
    """Best response along axis 1; TIE when the top two are within ``tolerance``; UNDEFINED where any is NaN."""
    undefined = np.isnan(scores).any(axis=1)
    filled = np.where(np.isnan(scores), -np.inf, scores)
    ranked = np.sort(filled, axis=1)
    gap = ranked[:, -1] - ranked[:, -2]
    best = np.argmax(filled, axis=1)
    best = np.where((gap <= ifs.TOLERANCE_SLACK) | (gap < tolerance - ifs.TOLERANCE_SLACK), ifs.TIE, best)
    return np.where(undefined, ifs.UNDEFINED, best)


def _plain_operators(mu: np.ndarray, nu: np.ndarray, mask: np.ndarray, w: np.ndarray) -> dict[str, Any]:
    raw = np.where(mask, w, 0.0)
    total = raw.sum(axis=-1, keepdims=True)
    wn = raw / np.where(total > 0, total, 1.0)
    empty = total[..., 0] <= 0
    eps = ifs.IFWA_EPS
    mu_c, nu_c = np.clip(mu, eps, 1 - eps), np.clip(nu, eps, 1 - eps)
    results = {
        "weighted_mean": ((wn * mu).sum(axis=-1), (wn * nu).sum(axis=-1)),
        "ifwa": (1 - np.prod((1 - mu_c) ** wn, axis=-1), np.prod(nu_c**wn, axis=-1)),
        "ifwg": (np.prod(np.where(mask, mu, 1.0) ** wn, axis=-1), 1 - np.prod((1 - nu) ** wn, axis=-1)),
    }
    out: dict[str, Any] = {}
    for operator, (op_mu, op_nu) in results.items():
        op_mu, op_nu = np.where(empty, np.nan, op_mu), np.where(empty, np.nan, op_nu)
        out[operator] = (op_mu, op_nu)
        overall_mu, overall_nu = op_mu.mean(axis=2), op_nu.mean(axis=2)  # criteria, equal weights
        first, second = np.triu_indices(mu.shape[1], k=1)
        s = overall_mu - overall_nu
        out[f"{operator}_pairs"] = (
            (overall_mu[:, first] + overall_nu[:, second]) / 2,  # r_AB
            (overall_nu[:, first] + overall_mu[:, second]) / 2,
            0.5 + (s[:, first] - s[:, second]) / 4,  # soft label
            s[:, first] - s[:, second],  # margin
        )
        out[f"{operator}_best"] = _plain_preferred(s, TOLERANCE)
    return out


def _plain_hesitation(mu: np.ndarray, nu: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
    axes = (1, 2, 3)
    count = mask.sum(axis=axes)
    pi = 1 - mu - nu
    return {
        "confidence": 1 - np.where(mask, pi, 0).sum(axis=axes) / count,
        "clarity": np.where(mask, np.abs(mu - nu), 0).sum(axis=axes) / count,
        "entropy": np.where(mask, (np.minimum(mu, nu) + pi) / (np.maximum(mu, nu) + pi), 0).sum(axis=axes) / count,
    }


def _plain_item_agreement(mu: np.ndarray, nu: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """1 − mean over annotator pairs of the mean Szmidt-Kacprzyk distance over the values both gave."""
    total = np.zeros(mu.shape[0])
    pairs = np.zeros(mu.shape[0])
    for i, j in itertools.combinations(range(mu.shape[-1]), 2):
        d_mu, d_nu = mu[..., i] - mu[..., j], nu[..., i] - nu[..., j]
        d = np.sqrt(0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2))
        both = mask[..., i] & mask[..., j]
        shared = both.sum(axis=(1, 2))
        has = shared > 0
        total += np.where(has, np.where(both, d, 0).sum(axis=(1, 2)) / np.maximum(shared, 1), 0)
        pairs += has
    return 1 - total / pairs


def _plain_cross_mode(signed: np.ndarray) -> dict[str, float]:
    """Krippendorff's interval α on s, nominal α on sign(s), pairwise agreement with and without ties."""
    present = ~np.isnan(signed)
    m = present.sum(axis=1)
    pairable = m >= 2
    x, ok, m = np.where(present, signed, 0)[pairable], present[pairable], m[pairable]
    n = m.sum()
    # docs/DESIGN.md's closed form: Σ_{i≠j} (x_i − x_j)² over a unit's m values is 2m Σ (x_i − x̄_u)².
    unit_mean = x.sum(axis=1) / m
    within = 2 * m * np.where(ok, (x - unit_mean[:, None]) ** 2, 0).sum(axis=1)
    observed = (within / (m - 1)).sum() / n
    mean = x.sum() / n
    expected = 2 * np.where(ok, (x - mean) ** 2, 0).sum() / (n - 1)
    figures = {"alpha_interval": 1 - observed / expected}

    sign = np.where(np.abs(x) < TOLERANCE / 2 - ifs.TOLERANCE_SLACK / 2, 0, np.sign(x))
    counts = np.stack([(ok & (sign == c)).sum(axis=1) for c in (-1, 0, 1)], axis=1).astype(np.float64)
    scaled = counts / (m - 1)[:, None]
    coincidence = np.einsum("uc,uk->ck", scaled, counts) - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    off = ~np.eye(3, dtype=bool)
    figures["alpha_nominal"] = 1 - (n - 1) * coincidence[off].sum() / np.outer(n_c, n_c)[off].sum()
    figures["pairwise_with_ties"] = (counts * (counts - 1) / 2).sum() / (m * (m - 1) / 2).sum()
    signed_counts = counts[:, [0, 2]]
    m_signed = signed_counts.sum(axis=1)
    figures["pairwise_without_ties"] = (signed_counts * (signed_counts - 1) / 2).sum() / (
        m_signed * (m_signed - 1) / 2
    ).sum()
    return figures


def _plain_eq8(mu: np.ndarray, nu: np.ndarray, mask: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Eq. (8) with equal coefficients; no repeats, so consistency is missing and the other two share the weight."""
    scores = np.where(mask, mu - nu, np.nan).mean(axis=2)  # (items, responses, annotators)
    preferences = np.stack([_plain_preferred(scores[..., k], TOLERANCE) for k in range(mu.shape[-1])], axis=-1)
    usable = (gold[:, None] >= -1) & (preferences != ifs.UNDEFINED)
    expertise = ((preferences == gold[:, None]) & usable).sum(axis=0) / usable.sum(axis=0)

    count = mask.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        others_mu = (np.where(mask, mu, 0).sum(axis=-1, keepdims=True) - np.where(mask, mu, 0)) / (count - 1)
        others_nu = (np.where(mask, nu, 0).sum(axis=-1, keepdims=True) - np.where(mask, nu, 0)) / (count - 1)
    d_mu, d_nu = mu - others_mu, nu - others_nu
    distance = np.sqrt(0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2))
    counted = mask & (count > 1)
    agreement = 1 - np.where(counted, distance, 0).sum(axis=(0, 1, 2)) / counted.sum(axis=(0, 1, 2))
    quality = (expertise + agreement) / 2
    return quality / quality.sum()


def _plain_consensus(
    mu: np.ndarray, nu: np.ndarray, mask: np.ndarray, prior_items: int = weights.DEFAULT_PRIOR_ITEMS
) -> tuple[np.ndarray, int]:
    """Reliability-weighted consensus of the others, β_k = χ²(|V_k| + τ) / (Σ D_ik + τ·d̄), to a fixed point."""
    on_item = mask.any(axis=(1, 2))
    judged = on_item.sum(axis=0)
    # The χ² quantile is one scalar per annotator (no scipy here): the project's own function.
    prior = np.array([weights.chi2_isf(0.025, int(k) + prior_items) if k else 0.0 for k in judged])
    company = mask & (mask.sum(axis=-1, keepdims=True) > 1)
    items_measured = (on_item & (on_item.sum(axis=1) > 1)[:, None]).sum()

    def consensus(beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wts = np.where(mask, beta, 0.0)
        total = wts.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (wts * mu).sum(axis=-1) / total, (wts * nu).sum(axis=-1) / total

    def reliability(beta: np.ndarray) -> np.ndarray:
        wts = np.where(mask, beta, 0.0)
        total = wts.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            others_mu = ((wts * mu).sum(axis=-1, keepdims=True) - wts * mu) / (total - wts)
            others_nu = ((wts * nu).sum(axis=-1, keepdims=True) - wts * nu) / (total - wts)
        squared = np.where(company, (mu - others_mu) ** 2 + (nu - others_nu) ** 2, 0).sum(axis=(0, 1, 2))
        pooled = squared.sum() / items_measured
        return prior / np.maximum(squared + prior_items * pooled, 1e-5)

    beta = np.ones(mu.shape[-1])
    c_mu, c_nu = consensus(beta)
    iterations, loss = 0, np.inf
    while iterations < 100 and loss >= 1e-9:
        iterations += 1
        beta = reliability(beta)
        new_mu, new_nu = consensus(beta)
        loss = np.nansum((new_mu - c_mu) ** 2 + (new_nu - c_nu) ** 2) / np.nansum(new_mu**2 + new_nu**2)
        c_mu, c_nu = new_mu, new_nu
    beta = reliability(beta)
    return beta / beta.sum(), iterations


def plain_numpy_steps(data: Dataset) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """The plain implementation as steps, in the pipeline's order, each writing its results into ``state``."""
    mu, nu, mask, w = data.mu, data.nu, data.mask, data.annotator_weights

    def signed(state: dict[str, Any]) -> None:
        scores = np.where(mask, mu - nu, np.nan).mean(axis=2)
        state["signed"] = (scores[:, 0] - scores[:, 1]) / 2

    return [
        ("operators, criteria, pairs", lambda state: state.update(_plain_operators(mu, nu, mask, w))),
        ("confidence, clarity, entropy", lambda state: state.update(_plain_hesitation(mu, nu, mask))),
        ("ifs_agreement", lambda state: state.update(ifs_agreement=_plain_item_agreement(mu, nu, mask))),
        ("signed preference", signed),
        ("cross-mode α ×2, pairwise ±ties", lambda state: state.update(_plain_cross_mode(state["signed"]))),
        ("weights (Eq. 8)", lambda state: state.update(eq8=_plain_eq8(mu, nu, mask, data.gold))),
        ("weights (iterative consensus)", lambda state: state.update(consensus=_plain_consensus(mu, nu, mask))),
    ]


def time_plain(data: Dataset, repeat: int = 3) -> Timing:
    """Best (lowest wall) of ``repeat`` runs of the plain implementation, one step after another."""
    steps = plain_numpy_steps(data)
    best: Timing | None = None
    for _ in range(max(repeat, 1)):
        state: dict[str, Any] = {}
        start = time.perf_counter()
        with np.errstate(invalid="ignore", divide="ignore"):  # items nobody judged give NaN, as intended
            timings = run_chain([name for name, _ in steps], dict(steps), state)
        run = Timing(timings, state, time.perf_counter() - start)
        if best is None or run.wall < best.wall:
            best = run
    assert best is not None
    return best


def same_results(pipeline: dict[str, Any], plain: dict[str, Any]) -> list[str]:
    """Names of the figures on which the two implementations differ (beyond rounding); empty when all agree."""

    def close(a: Any, b: Any) -> bool:
        return bool(np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True))

    checks = {
        operator: close(pipeline[operator].mu, plain[operator][0]) and close(pipeline[operator].nu, plain[operator][1])
        for operator in ifs.OPERATORS
    }
    for operator in ifs.OPERATORS:
        table, (pref_mu, pref_nu, soft, margin) = pipeline[f"{operator}_pairs"], plain[f"{operator}_pairs"]
        checks[f"{operator} pairs"] = (
            close(table.preference.mu, pref_mu)
            and close(table.preference.nu, pref_nu)
            and close(table.soft_label, soft)
            and close(table.margin, margin)
            and np.array_equal(pipeline[f"{operator}_best"], plain[f"{operator}_best"])
        )
    for name in ("confidence", "clarity", "entropy", "ifs_agreement", "signed", "alpha_interval", "alpha_nominal"):
        checks[name] = close(pipeline[name], plain[name])
    for name in ("pairwise_with_ties", "pairwise_without_ties"):
        checks[name] = close(pipeline[name], plain[name])
    checks["weights (Eq. 8)"] = close(pipeline["eq8"].weight, plain["eq8"])
    checks["weights (consensus)"] = (
        close(pipeline["consensus"].weight, plain["consensus"][0])
        and pipeline["consensus"].iterations == plain["consensus"][1]
    )
    return [name for name, ok in checks.items() if not ok]
