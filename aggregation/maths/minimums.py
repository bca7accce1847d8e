"""The least data each figure needs before anything shows it: one place for the dashboard, the stats API and the
exports. Pure Python, no Django.

A figure computed from one overlapping item (Krippendorff's α = 0.000 from two labels) or a weight from one label
each (0.75 / 0.25) looks like a measurement and is noise. Below these numbers a figure is not shown; its place says
what it needs ("needs 2 annotators on at least 5 items (1 so far)"). The computation stores the figure's overlap
(``items``) beside its value, and every reader passes the stored dict through :func:`agreement_shown` so a value
stored before a minimum was raised is withheld as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Annotators an agreement figure compares on one item.
MIN_ANNOTATORS = 2
#: Items labelled by at least MIN_ANNOTATORS people before any agreement figure (pairwise, α, IFS agreement, a point
#: of agreement over time) is shown: with fewer, α swings across its whole range from one label.
MIN_OVERLAP_ITEMS = 5
#: Labels of one annotator before their weight (and its agreement part) is shown; weights also need the project's
#: overlap above, since the agreement part compares them with the others.
MIN_WEIGHT_LABELS = 5
#: Gold comparisons of one annotator before their expertise (accuracy on gold) is shown: from one, it reads 1.000 or
#: 0.000.
MIN_EXPERTISE_GOLD = 5
#: Comparisons before a human-vs-model share is shown (aggregation.maths.comparisons.figure).
MIN_COMPARISONS = 5


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def agreement_needs(overlap_items: int) -> str | None:
    """None when an agreement figure may be shown on ``overlap_items`` items labelled by 2 or more; else why not."""
    if overlap_items >= MIN_OVERLAP_ITEMS:
        return None
    return f"needs {MIN_ANNOTATORS} annotators on at least {_count(MIN_OVERLAP_ITEMS, 'item')} ({overlap_items} so far)"


def weight_needs(n_labels: int, overlap_items: int, n_annotators: int) -> str | None:
    """None when an annotator's weight may be shown; else what it needs."""
    if n_annotators < MIN_ANNOTATORS:
        return f"needs {MIN_ANNOTATORS} annotators (weights compare them)"
    if n_labels < MIN_WEIGHT_LABELS:
        return f"needs {_count(MIN_WEIGHT_LABELS, 'label')} from this annotator ({n_labels} so far)"
    return agreement_needs(overlap_items)


def expertise_needs(n_gold: int | None) -> str | None:
    """None when an annotator's expertise may be shown on ``n_gold`` gold comparisons; else what it needs."""
    if n_gold is None:
        return "needs a recompute (computed before its number of gold items was recorded)"
    if n_gold >= MIN_EXPERTISE_GOLD:
        return None
    return f"needs {_count(MIN_EXPERTISE_GOLD, 'gold item')} labelled by this annotator ({n_gold} so far)"


def item_preference_needs(n_labels: int) -> str | None:
    """None when an item's p(best ≻ worst) may be shown on ``n_labels`` labels; else what it needs (from one label it
    is that one person's slider, not a probability)."""
    if n_labels >= MIN_ANNOTATORS:
        return None
    return f"needs {_count(MIN_ANNOTATORS, 'label')} ({n_labels} so far)"


def overlap_items_of(stored: Mapping[str, Any] | None) -> int:
    """The overlap a stored agreement figure was computed on (0 for a dict stored before it was recorded)."""
    items = (stored or {}).get("items")
    return items if isinstance(items, int) and not isinstance(items, bool) else 0


def agreement_shown(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """A stored agreement figure as readers may show it: its value and interval withheld, with the reason, below the
    minimum overlap."""
    raw = dict(stored or {})
    if not raw:
        return raw
    reason = agreement_needs(overlap_items_of(raw))
    if reason is not None:
        raw.update(value=None, ci=None, reason=reason)
    return raw


__all__ = [
    "MIN_ANNOTATORS",
    "MIN_COMPARISONS",
    "MIN_OVERLAP_ITEMS",
    "MIN_WEIGHT_LABELS",
    "agreement_needs",
    "agreement_shown",
    "overlap_items_of",
    "weight_needs",
]
