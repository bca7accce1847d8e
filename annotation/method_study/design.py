"""The crossover design of a method study: who judges which items with which method, in which order.

Pure (no Django), so the study service, the simulation in ``tests/method_study`` and a reader of an exported
design all use the one construction.

The construction, for m methods, n annotators, items and a block size b:

- The items, in a seeded order, are cut into K = ⌈items / b⌉ chunks of b (the last may be shorter).
- Annotator j works through m blocks. In the block at period p they use method ``w_j[p]`` on chunk
  ``(j + w_j[p]) mod K``. Their m chunks are distinct (K ≥ m), so every annotator uses every method, each on
  different items; chunk k under method t is judged by every annotator j ≡ k − t (mod K), so with n ≥ K every item
  is judged under every method by someone (by ⌊n/K⌋ or ⌈n/K⌉ people).
- The order ``w_j`` is row j mod R of a Williams design (Williams 1949): a Latin square in which every method
  appears once in every period and every method follows every other method equally often, so period effects
  (fatigue, learning) and first-order carry-over are balanced across methods. For an even m one square (R = m)
  suffices; for an odd m the square and its mirror image are needed (R = 2m). The balance is exact when the
  number of annotators is a multiple of R and approximate otherwise (the report's paired differences are within
  annotators, so an unbalanced remainder costs precision, not validity).

Reference: E. J. Williams (1949), "Experimental designs balanced for the estimation of residual effects of
treatments", Australian Journal of Scientific Research A 2(2), 149-168. See also Jones & Kenward, *Design and
Analysis of Cross-Over Trials* (3rd ed., 2014), ch. 4.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass


def williams_square(m: int) -> list[list[int]]:
    """The rows of a Williams design for ``m`` methods (m rows for even m, 2m for odd m); row r is a method order.

    The first row is 0, 1, m−1, 2, m−2, …; row i adds i (mod m). For odd m the reversed rows follow.
    """
    if m < 1:
        raise ValueError("a design needs at least one method")
    first: list[int] = [0]
    low, high = 1, m - 1
    for step in range(1, m):
        if step % 2 == 1:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    rows = [[(value + shift) % m for value in first] for shift in range(m)]
    if m % 2 == 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


@dataclass(frozen=True)
class Cell:
    """One planned judgment: ``annotator`` (index into the annotators given) judges ``item`` (an item id) with
    method ``method`` (index into the methods) in block ``block`` (their period, 0-based), as their
    ``sequence``-th item of the study (0-based)."""

    annotator: int
    item: int
    method: int
    block: int
    sequence: int


def design_problems(*, n_methods: int, n_annotators: int, n_items: int, block_size: int) -> list[str]:
    """Why these numbers admit no design; empty when they do. Each message says what to change."""
    problems: list[str] = []
    if n_methods < 2:
        problems.append("Pick at least two methods to compare.")
    if block_size < 1:
        problems.append("The block size must be at least 1.")
    if n_annotators < n_methods:
        problems.append(
            f"Every item must be judged under each of the {n_methods} methods by different people: "
            f"pick at least {n_methods} annotators (got {n_annotators})."
        )
    if problems:
        return problems
    chunks = math.ceil(n_items / block_size)
    if chunks < n_methods:
        problems.append(
            f"Each annotator needs a block of different items per method: with {n_items} items the block size "
            f"can be at most {n_items // n_methods} (got {block_size})."
        )
    elif chunks > n_annotators:
        problems.append(
            f"{n_annotators} annotators cover every item under every method only with blocks of at least "
            f"{math.ceil(n_items / n_annotators)} items (got {block_size}); or pick fewer items or more annotators."
        )
    return problems


def smallest_block_size(*, n_annotators: int, n_items: int) -> int:
    """The block size that gives every item its methods with the least work per annotator."""
    return max(1, math.ceil(n_items / max(n_annotators, 1)))


#: People judging one item under one method before the report can compare them (agreement per method: α, pairwise).
JUDGES_FOR_AGREEMENT = 2


def overlap_block_size(*, n_methods: int, n_annotators: int, n_items: int) -> int | None:
    """The smallest block size with which every item is judged under every method by JUDGES_FOR_AGREEMENT people,
    so the report has agreement per method; None when these numbers allow no such design (too few annotators)."""
    groups = n_annotators // JUDGES_FOR_AGREEMENT
    if n_methods < 1 or groups < n_methods or n_items < n_methods:
        return None
    size = max(1, math.ceil(n_items / groups))
    return size if math.ceil(n_items / size) >= n_methods else None


def default_block_size(*, n_methods: int, n_annotators: int, n_items: int) -> int:
    """The block size used when the lead leaves it empty: the smallest that gives every method agreement figures
    when the annotators allow it, else the smallest that covers every item under every method."""
    return overlap_block_size(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items) or smallest_block_size(
        n_annotators=n_annotators, n_items=n_items
    )


def agreement_shortfall(*, n_methods: int, n_annotators: int, n_items: int, block_size: int) -> str | None:
    """None when every item is judged by JUDGES_FOR_AGREEMENT people under each method; else, in words, which
    figures the design cannot give and what to change."""
    chunks = math.ceil(n_items / max(block_size, 1))
    if chunks < 1 or n_annotators // chunks >= JUDGES_FOR_AGREEMENT:
        return None
    which = "some items are" if n_annotators % chunks and n_annotators // chunks else "every item is"
    message = (
        f"With blocks of {block_size} items and {n_annotators} annotators, {which} judged by only one person under "
        "each method, so agreement between annotators per method (Krippendorff's α and pairwise agreement, in the "
        "report and its paired differences) has too little overlap and shows “—”. Agreement with gold, time per "
        "item, fatigue and self-consistency are not affected."
    )
    better = overlap_block_size(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items)
    if better is not None:
        return f"{message} To get them, use blocks of {better} items (each annotator then judges {n_methods * better})."
    return (
        f"{message} To get them, add annotators: {JUDGES_FOR_AGREEMENT * n_methods} or more for {n_methods} methods "
        "(or compare fewer methods)."
    )


def design_build(
    *, n_methods: int, n_annotators: int, item_ids: Sequence[int], block_size: int, seed: int
) -> list[Cell]:
    """Every planned judgment of the study (see the module docstring). Raises ValueError when
    :func:`design_problems` names a problem. Deterministic for a given seed and argument order."""
    problems = design_problems(
        n_methods=n_methods, n_annotators=n_annotators, n_items=len(item_ids), block_size=block_size
    )
    if problems:
        raise ValueError(" ".join(problems))
    ordered = list(item_ids)
    random.Random(f"crossover-items:{seed}").shuffle(ordered)
    chunks = [ordered[start : start + block_size] for start in range(0, len(ordered), block_size)]
    rows = williams_square(n_methods)
    cells: list[Cell] = []
    for annotator in range(n_annotators):
        order = rows[annotator % len(rows)]
        sequence = 0
        for block, method in enumerate(order):
            items = list(chunks[(annotator + method) % len(chunks)])
            # Within a block each person sees the items in an order of their own, so item and position are not
            # confounded across people.
            random.Random(f"crossover-block:{seed}:{annotator}:{block}").shuffle(items)
            for item in items:
                cells.append(Cell(annotator=annotator, item=item, method=method, block=block, sequence=sequence))
                sequence += 1
    return cells
