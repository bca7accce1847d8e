"""The maths benchmark's other yardstick: the same figures with a plain per-item Python loop (benchmarks/aggregate.py
times it on a slice and extrapolates)."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make the repository's packages and the benchmark's sibling modules importable.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools
import math
import time
from collections.abc import Sequence
from typing import Any

from aggregate_data import TOLERANCE, Dataset

from aggregation.maths import ifs

# --------------------------------------------------------------------------------------------------------------
# The same figures with a plain per-item Python loop

Value = tuple[float, float]
Cell = list[Value | None]  # one entry per annotator
Item = list[list[Cell]]  # responses → criteria → cell


def _as_lists(data: Dataset) -> list[Item]:
    """items → responses → criteria → annotators → (μ, ν) or None."""
    mu, nu, mask = data.mu.tolist(), data.nu.tolist(), data.mask.tolist()
    return [
        [
            [
                [(m, n) if p else None for m, n, p in zip(mu_c, nu_c, mask_c, strict=True)]
                for mu_c, nu_c, mask_c in zip(mu_r, nu_r, mask_r, strict=True)
            ]
            for mu_r, nu_r, mask_r in zip(mu_i, nu_i, mask_i, strict=True)
        ]
        for mu_i, nu_i, mask_i in zip(mu, nu, mask, strict=True)
    ]


def _loop_operator(cell: Cell, w: Sequence[float], operator: str) -> Value | None:
    present = [(value, weight) for value, weight in zip(cell, w, strict=True) if value is not None]
    if not present:
        return None
    total = sum(weight for _, weight in present)
    if operator == "weighted_mean":
        return (
            sum(weight * m for (m, _), weight in present) / total,
            sum(weight * n for (_, n), weight in present) / total,
        )
    if operator == "ifwa":
        eps = ifs.IFWA_EPS
        keep = opposed = 1.0
        for (m, n), weight in present:
            keep *= (1.0 - min(max(m, eps), 1 - eps)) ** (weight / total)
            opposed *= min(max(n, eps), 1 - eps) ** (weight / total)
        return 1.0 - keep, opposed
    supported = keep = 1.0
    for (m, n), weight in present:
        supported *= m ** (weight / total)
        keep *= (1.0 - n) ** (weight / total)
    return supported, 1.0 - keep


def _sk(a: Value, b: Value) -> float:
    d_mu, d_nu = a[0] - b[0], a[1] - b[1]
    return math.sqrt(0.5 * (d_mu * d_mu + d_nu * d_nu + (d_mu + d_nu) ** 2))


def _mean_value(values: Sequence[Value | None]) -> Value | None:
    known = [v for v in values if v is not None]
    if len(known) < len(values):
        return None
    return sum(v[0] for v in known) / len(known), sum(v[1] for v in known) / len(known)


def _preferred(scores: Sequence[float | None]) -> int:
    known = [s for s in scores if s is not None]
    if len(known) < len(scores):
        return ifs.UNDEFINED
    ordered = sorted(range(len(known)), key=lambda r: known[r], reverse=True)
    gap = known[ordered[0]] - known[ordered[1]]
    return ifs.TIE if gap <= ifs.TOLERANCE_SLACK or gap < TOLERANCE - ifs.TOLERANCE_SLACK else ordered[0]


def _annotator_scores(item: Item, annotator: int) -> list[float | None]:
    """Criterion-mean S = μ − ν of one annotator per response (None if any value is missing)."""
    overall = [_mean_value([cell[annotator] for cell in response]) for response in item]
    return [None if v is None else v[0] - v[1] for v in overall]


def _loop_item(item: Item, w: Sequence[float]) -> tuple[dict[str, Any], float | None, list[float | None]]:
    n_annotators = len(w)
    figures: dict[str, Any] = {}
    for operator in ifs.OPERATORS:
        per_response = [_mean_value([_loop_operator(cell, w, operator) for cell in response]) for response in item]
        pairs = []
        for a, b in itertools.combinations(range(len(per_response)), 2):
            ra, rb = per_response[a], per_response[b]
            if ra is not None and rb is not None:
                soft = 0.5 + (ra[0] - ra[1] - rb[0] + rb[1]) / 4
                pairs.append(((ra[0] + rb[1]) / 2, (ra[1] + rb[0]) / 2, soft))
        scores = [None if r is None else r[0] - r[1] for r in per_response]
        figures[operator] = (per_response, pairs, _preferred(scores))

    cells = [cell for response in item for cell in response]
    given = [value for cell in cells for value in cell if value is not None]
    pis = [1 - m - n for m, n in given]
    figures["confidence"] = 1 - sum(pis) / len(given)
    figures["clarity"] = sum(abs(m - n) for m, n in given) / len(given)
    figures["entropy"] = sum((min(m, n) + 1 - m - n) / (max(m, n) + 1 - m - n) for m, n in given) / len(given)

    pair_distances = []
    for i, j in itertools.combinations(range(n_annotators), 2):
        shared = [_sk(x, y) for cell in cells if (x := cell[i]) is not None and (y := cell[j]) is not None]
        if shared:
            pair_distances.append(sum(shared) / len(shared))
    item_agreement = 1 - sum(pair_distances) / len(pair_distances) if pair_distances else None

    signed: list[float | None] = []
    for annotator in range(n_annotators):
        first, second = _annotator_scores(item, annotator)[:2]
        signed.append(None if first is None or second is None else (first - second) / 2)
    return figures, item_agreement, signed


def _loop_agreement(signed: list[list[float | None]]) -> None:
    """Krippendorff interval and nominal α and pairwise agreement, per unit by the textbook definitions."""
    units = [[s for s in row if s is not None] for row in signed]
    pairable = [u for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    within = sum(sum((a - b) ** 2 for a, b in itertools.permutations(u, 2)) / (len(u) - 1) for u in pairable)
    mean = sum(sum(u) for u in pairable) / n
    spread = sum((x - mean) ** 2 for u in pairable for x in u)
    _ = 1 - (within / n) / (2 * spread / (n - 1))

    signs = [[0 if abs(s) < TOLERANCE / 2 else (1 if s > 0 else -1) for s in u] for u in pairable]
    coincidence: dict[tuple[int, int], float] = {}
    for u in signs:
        for a, b in itertools.permutations(u, 2):
            coincidence[(a, b)] = coincidence.get((a, b), 0.0) + 1 / (len(u) - 1)
    totals: dict[int, float] = {}
    for (a, _b), v in coincidence.items():
        totals[a] = totals.get(a, 0.0) + v
    observed = sum(v for (a, b), v in coincidence.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (n - 1)
    _ = 1 - observed / expected

    for with_ties in (True, False):
        agree = count = 0
        for u in signs:
            for a, b in itertools.combinations(u, 2):
                if with_ties or (a != 0 and b != 0):
                    count += 1
                    agree += a == b


def _loop_weights(items: list[Item], gold: Sequence[int], n_annotators: int, iterations: int) -> None:
    """Eq. 8 parts (leave-one-out agreement, gold accuracy) and the iterative consensus rounds."""
    distance_sum = [0.0] * n_annotators
    distance_count = [0] * n_annotators
    correct = [0] * n_annotators
    gold_seen = [0] * n_annotators
    for index, item in enumerate(items):
        for cell in (cell for response in item for cell in response):
            for a, own in enumerate(cell):
                others = [v for b, v in enumerate(cell) if b != a and v is not None]
                if own is not None and others:
                    centre = (
                        sum(o[0] for o in others) / len(others),
                        sum(o[1] for o in others) / len(others),
                    )
                    distance_sum[a] += _sk(own, centre)
                    distance_count[a] += 1
        if gold[index] >= -1:
            for a in range(n_annotators):
                preferred = _preferred(_annotator_scores(item, a))
                if preferred != ifs.UNDEFINED:
                    gold_seen[a] += 1
                    correct[a] += preferred == gold[index]

    reliability = [1.0] * n_annotators
    for _ in range(iterations + 1):
        totals = [0.0] * n_annotators
        for item in items:
            for cell in (cell for response in item for cell in response):
                for a, own in enumerate(cell):
                    weighted = [(v, reliability[b]) for b, v in enumerate(cell) if b != a and v is not None]
                    weight = sum(r for _, r in weighted)
                    if own is None or weight <= 0:
                        continue
                    c_mu = sum(v[0] * r for v, r in weighted) / weight
                    c_nu = sum(v[1] * r for v, r in weighted) / weight
                    totals[a] += (own[0] - c_mu) ** 2 + (own[1] - c_nu) ** 2
        reliability = [1.0 / max(t, 1e-5) for t in totals]


def loop_pipeline(items: list[Item], w: Sequence[float], gold: Sequence[int], iterations: int) -> None:
    signed = [_loop_item(item, w)[2] for item in items]
    _loop_agreement(signed)
    _loop_weights(items, gold, len(w), iterations)


def time_loop(data: Dataset, n_items: int, iterations: int) -> tuple[float, float]:
    """Wall and CPU seconds of the loop on the first ``n_items`` items."""
    head = data.head(n_items)
    items = _as_lists(head)
    w = head.annotator_weights.tolist()
    gold = head.gold.tolist()
    wall, cpu = time.perf_counter(), time.process_time()
    loop_pipeline(items, w, gold, iterations)
    return time.perf_counter() - wall, time.process_time() - cpu


# --------------------------------------------------------------------------------------------------------------
