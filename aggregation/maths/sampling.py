"""Drawing items for calibration, certification and audit requests, with each item's inclusion probability recorded.

Every human label used as evidence about the model comes from an item drawn at random with a known probability
π_i of being drawn, so that the estimators of :mod:`aggregation.maths.accuracy` can weight it by 1/π_i and say what the
model's accuracy is on the items nobody checked. Pure numpy (and hashlib), no Django.

Draws are reproducible: each item's uniform draw u is a hash of (salt, project seed, external id), as for the blind
sample (:mod:`projects.blind`), so a reload, a restart or a re-import gives the same requests; a different salt per
request kind keeps the kinds independent of each other and of blindness.

Two schemes, both with exact inclusion probabilities:

* **Stratified simple random sampling without replacement** (:func:`stratified_draw`, for calibration and
  certification). Items are split into strata (bins of the model's stated confidence, or one stratum); in stratum h
  the n_h items with the smallest u are drawn. The n_h smallest of N_h independent uniforms are a simple random
  sample, so π_i = n_h / N_h for every item of the stratum. :func:`allocate` spreads a total over strata in
  proportion to their sizes (certification: the sample looks like the population) or equally (calibration: every
  confidence bin gets enough items to say something on its own).
* **Poisson sampling** (:func:`poisson_draw`, for audit). An item handed to the model is drawn when u < rate, so a
  continuing stream of items is sampled without knowing in advance how many will come; π_i = rate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
Allocation = Literal["proportional", "equal"]

_SCALE = float(2**64)

#: Confidence bins used when a project sets none: a model's stated confidence for a two-way preference rarely
#: falls below 0.5, and these five bins of 0.1 resolve the range where certification decisions are made.
DEFAULT_CONFIDENCE_EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def uniform_draws(*, seed: int, keys: Iterable[str], salt: str) -> FloatArray:
    """One uniform draw in [0, 1) per key: the first 8 bytes of sha256("{salt}:{seed}:{key}") / 2**64."""
    out = [int.from_bytes(hashlib.sha256(f"{salt}:{seed}:{key}".encode()).digest()[:8], "big") / _SCALE for key in keys]
    return np.asarray(out, dtype=np.float64)


def confidence_strata(confidence: ArrayLike, edges: ArrayLike = DEFAULT_CONFIDENCE_EDGES) -> IntArray:
    """Bin index of each confidence: bin b holds edges[b] ≤ c < edges[b + 1]; the last bin includes its upper edge,
    values below the first edge fall in bin 0 and values above the last in the last bin (a model may state a
    confidence outside the range the lead chose; it still belongs to some bin). NaN (no stated confidence) is an
    error: such items cannot be placed in a confidence-stratified draw."""
    c = np.asarray(confidence, dtype=np.float64).ravel()
    e = np.asarray(edges, dtype=np.float64).ravel()
    if e.size < 2 or np.any(np.diff(e) <= 0):
        raise ValueError("edges must be at least two increasing values")
    if np.isnan(c).any():
        raise ValueError("every item needs a confidence to be placed in a bin")
    return np.clip(np.searchsorted(e, c, side="right") - 1, 0, e.size - 2).astype(np.int64)


def allocate(sizes: ArrayLike, total: int, how: Allocation = "proportional") -> IntArray:
    """How many items to draw from each stratum, summing to min(total, Σ sizes), never more than a stratum holds.

    ``proportional``: largest-remainder rounding of total · N_h / N. ``equal``: total / H each, and what a small
    stratum cannot take goes to the others (so a bin with 3 items gives all 3 and the rest is shared).
    """
    n = np.asarray(sizes, dtype=np.int64).ravel()
    if np.any(n < 0) or total < 0:
        raise ValueError("sizes and total must be non-negative")
    want = int(min(total, n.sum()))
    if want == 0:
        return np.zeros_like(n)
    if how == "proportional":
        exact = want * n / n.sum()
        out = np.floor(exact).astype(np.int64)
        order = np.argsort(-(exact - out), kind="stable")
        out[order[: want - int(out.sum())]] += 1
        return np.minimum(out, n)
    if how != "equal":
        raise ValueError(f"unknown allocation {how!r}")
    out = np.zeros_like(n)
    left = want
    open_ = n > 0
    while left > 0:
        share = max(left // int(open_.sum()), 1)
        for h in np.flatnonzero(open_):
            take = min(share, int(n[h] - out[h]), left)
            out[h] += take
            left -= take
            if out[h] == n[h]:
                open_[h] = False
            if left == 0:
                break
    return out


@dataclass(frozen=True)
class Draw:
    """The outcome of a draw over a population: which items were drawn, each item's inclusion probability (for
    every item of the population, drawn or not), its stratum, and the stratum sizes and sample sizes."""

    drawn: BoolArray
    probability: FloatArray
    stratum: IntArray
    population: IntArray  # N_h
    sample: IntArray  # n_h

    @property
    def weights(self) -> FloatArray:
        """Design weights 1/π_i of the drawn items, in population order."""
        return np.asarray(1.0 / self.probability[self.drawn], dtype=np.float64)


def stratified_draw(
    *,
    draws: ArrayLike,
    strata: ArrayLike | None = None,
    total: int,
    how: Allocation = "proportional",
    eligible: ArrayLike | None = None,
    n_strata: int | None = None,
) -> Draw:
    """Stratified simple random sample without replacement of ``total`` items: in each stratum the n_h eligible
    items with the smallest draw u (ties broken by position), π_i = n_h / N_h (module docstring).

    ``strata`` (default one stratum) numbers each item's stratum from 0; ``eligible`` (default all) marks the
    population: items outside it are never drawn and get π = 0. ``n_strata`` (default: the highest stratum
    number + 1) keeps empty strata at the end in the counts, so the sizes line up with the confidence bins.
    """
    u = np.asarray(draws, dtype=np.float64).ravel()
    items = u.size
    h = np.zeros(items, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64).ravel()
    ok = np.ones(items, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool).ravel()
    if h.shape != u.shape or ok.shape != u.shape:
        raise ValueError("draws, strata and eligible need one entry per item")
    if np.any(h < 0):
        raise ValueError("strata are numbered from 0")
    if np.any((u < 0) | (u >= 1) | np.isnan(u)):
        raise ValueError("draws must lie in [0, 1)")
    n_strata = max(int(h.max()) + 1 if items else 0, n_strata or 0)
    population = np.bincount(h[ok], minlength=n_strata).astype(np.int64)
    sample = allocate(population, total, how)
    # Eligible items sorted by (stratum, u, position); the first n_h of each stratum are drawn.
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((idx, u[idx], h[idx]))]
    sorted_h = h[order]
    starts = np.concatenate(([0], np.cumsum(population)))[:-1]
    rank = np.arange(order.size) - starts[sorted_h]
    drawn = np.zeros(items, dtype=bool)
    drawn[order[rank < sample[sorted_h]]] = True
    per_stratum = sample / np.maximum(population, 1)
    probability = np.zeros(items, dtype=np.float64)
    probability[idx] = per_stratum[h[idx]]
    return Draw(drawn=drawn, probability=probability, stratum=h, population=population, sample=sample)


def poisson_draw(*, draws: ArrayLike, rate: float, eligible: ArrayLike | None = None) -> Draw:
    """Poisson sample: each eligible item is drawn when its u < ``rate``, independently, so π_i = rate. Suits a
    stream (audit after handoff): an item's fate depends on its own draw only, whenever it arrives."""
    if not 0.0 < rate <= 1.0:
        raise ValueError("rate must lie in (0, 1]")
    u = np.asarray(draws, dtype=np.float64).ravel()
    ok = np.ones(u.size, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool).ravel()
    if ok.shape != u.shape:
        raise ValueError("draws and eligible need one entry per item")
    drawn = ok & (u < rate)
    probability = np.where(ok, rate, 0.0).astype(np.float64)
    stratum = np.zeros(u.size, dtype=np.int64)
    return Draw(
        drawn=drawn,
        probability=probability,
        stratum=stratum,
        population=np.array([int(ok.sum())], dtype=np.int64),
        sample=np.array([int(drawn.sum())], dtype=np.int64),
    )


__all__ = [
    "DEFAULT_CONFIDENCE_EDGES",
    "Draw",
    "allocate",
    "confidence_strata",
    "poisson_draw",
    "stratified_draw",
    "uniform_draws",
]
