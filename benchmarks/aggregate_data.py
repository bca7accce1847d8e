"""The data and the timing helpers shared by the maths benchmark (benchmarks/aggregate.py) and its yardsticks."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make the repository's packages and the benchmark's sibling modules importable.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aggregation.maths import ifs

TOLERANCE = 0.1


@dataclass(frozen=True)
class Dataset:
    """Judgments shaped (items, responses, criteria, annotators), per-mille values divided by 1000."""

    mu: np.ndarray
    nu: np.ndarray
    mask: np.ndarray
    annotator_weights: np.ndarray
    gold: np.ndarray

    @property
    def n_values(self) -> int:
        return int(self.mu.size)

    def head(self, n_items: int) -> Dataset:
        return Dataset(
            self.mu[:n_items],
            self.nu[:n_items],
            self.mask[:n_items],
            self.annotator_weights,
            self.gold[:n_items],
        )


def build_dataset(
    n_items: int = 100_000,
    n_responses: int = 2,
    n_criteria: int = 1,
    n_annotators: int = 5,
    missing: float = 0.1,
    gold_share: float = 0.05,
    seed: int = 0,
    missing_per_value: bool = False,
) -> Dataset:
    """Synthetic judgments around a hidden truth, so that agreement and weights have something to find.

    Missing judgments are whole annotations (an annotator skipped the item: all its values absent), as the
    annotation page produces them; ``missing_per_value`` drops single values instead, the slower general case.
    """
    rng = np.random.default_rng(seed)
    shape = (n_items, n_responses, n_criteria, n_annotators)
    truth = rng.uniform(0.0, 1.0, (*shape[:-1], 1))
    noise = rng.uniform(0.03, 0.3, n_annotators)  # careful to sloppy annotators
    support = np.clip(truth + rng.normal(0.0, 1.0, shape) * noise, 0.0, 1.0)
    mu = np.round(support * 1000) / 1000
    nu = np.floor(rng.uniform(0.0, 1.0, shape) * (1.0 - mu) * 1000) / 1000
    if missing_per_value:
        mask = rng.random(shape) >= missing
    else:
        skipped = rng.random((n_items, 1, 1, n_annotators)) < missing
        mask = np.broadcast_to(~skipped, shape).copy()
    gold = np.full(n_items, ifs.UNDEFINED, dtype=np.int64)
    with_gold = rng.random(n_items) < gold_share
    gold[with_gold] = np.argmax(truth[with_gold, :, 0, 0], axis=1)
    return Dataset(mu, nu, mask, rng.uniform(0.5, 1.5, n_annotators), gold)


@dataclass(frozen=True)
class Timing:
    steps: dict[str, tuple[float, float]]  # name → (wall, cpu) seconds; cpu of the thread that ran it
    state: dict[str, Any]
    wall: float  # the whole pipeline, start to finish

    @property
    def cpu(self) -> float:
        return sum(cpu for _, cpu in self.steps.values())


def run_chain(
    names: Sequence[str], steps: dict[str, Callable[[dict[str, Any]], Any]], state: dict[str, Any]
) -> dict[str, tuple[float, float]]:
    timings = {}
    for name in names:
        wall, cpu = time.perf_counter(), time.thread_time()
        steps[name](state)
        timings[name] = (time.perf_counter() - wall, time.thread_time() - cpu)
    return timings
