"""The fixed random blind sample, drawn once per item from a hash so that it never depends on run or order.

u = first 8 bytes of sha256("{salt}:{seed}:{external_id}") / 2**64, a uniform draw in [0, 1).
An item is blind when u < blind_rate; when that gives fewer than the minimum, the items with the smallest u are
added. Every item of a sample topped up that way had the same chance of being among the m smallest draws of N,
m/N, which is its recorded inclusion probability; otherwise it is blind_rate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

_SCALE = float(2**64)


def uniform_draw(*, seed: int, external_id: str, salt: str = "blind") -> float:
    digest = hashlib.sha256(f"{salt}:{seed}:{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def queue_key(*, seed: int, external_id: str) -> float:
    # A different salt: queue order must be independent of blindness.
    return uniform_draw(seed=seed, external_id=external_id, salt="queue")


def trl_chosen_first(*, seed: int, external_id: str) -> bool:
    """Where a TRL row's chosen answer is stored: drawn from the seed, so position says nothing about preference."""
    return uniform_draw(seed=seed, external_id=external_id, salt="trl-order") < 0.5


@dataclass(frozen=True)
class BlindChoice:
    is_blind: list[bool]
    inclusion_probability: float


def choose_blind(*, draws: Sequence[float], blind_rate: float, minimum: int) -> BlindChoice:
    """Blind flags for a whole set of items drawn together (before labelling starts)."""
    n = len(draws)
    flags = [u < blind_rate for u in draws]
    if sum(flags) >= minimum or n == 0:
        return BlindChoice(is_blind=flags, inclusion_probability=blind_rate)
    wanted = min(minimum, n)
    smallest = sorted(range(n), key=lambda i: (draws[i], i))[:wanted]
    flags = [False] * n
    for index in smallest:
        flags[index] = True
    return BlindChoice(is_blind=flags, inclusion_probability=wanted / n)


def choose_blind_for_new_items(
    *, draws: Sequence[float], blind_rate: float, minimum: int, existing_blind: int, existing_total: int
) -> BlindChoice:
    """Blind flags for items added after labelling started: existing items keep theirs (a suggestion seen
    cannot be unseen); new items get their own draws, and only new items top the sample up to the minimum."""
    flags = [u < blind_rate for u in draws]
    missing = minimum - existing_blind - sum(flags)
    if missing <= 0:
        return BlindChoice(is_blind=flags, inclusion_probability=blind_rate)
    candidates = sorted((i for i, flag in enumerate(flags) if not flag), key=lambda i: (draws[i], i))
    for index in candidates[:missing]:
        flags[index] = True
    total = existing_total + len(draws)
    return BlindChoice(is_blind=flags, inclusion_probability=min(1.0, minimum / total) if total else blind_rate)
