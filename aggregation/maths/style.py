"""Style features of an answer and their differences between two answers, for style-controlled leaderboards
(:func:`aggregation.maths.leaderboard.fit` with ``covariates``). Pure Python and numpy, no Django.

The features are Chatbot Arena's (2024, "Does style matter?"): the answer's length and its markdown — headers, list
items and bold spans. Each enters as the normalised difference (f_a − f_b) / (f_a + f_b) (0 when both are 0), which
lies in [−1, 1] whatever the scale, so a coefficient reads as "the effect of one answer having all of it and the other
none". Length is counted in words (whitespace-separated), a tokenizer-free stand-in for Arena's tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

FEATURES = ("length", "headers", "list_items", "bold")

_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def style_features(text: str) -> tuple[int, int, int, int]:
    """Counts of :data:`FEATURES` in one answer."""
    return (
        len(text.split()),
        len(_HEADER.findall(text)),
        len(_LIST_ITEM.findall(text)),
        len(_BOLD.findall(text)),
    )


def style_differences(first: Sequence[str], second: Sequence[str]) -> NDArray[np.float64]:
    """(comparisons, features): the normalised difference of each feature between the first and second answers."""
    if len(first) != len(second):
        raise ValueError("one second answer per first answer")
    a = np.array([style_features(text) for text in first], dtype=np.float64).reshape(-1, len(FEATURES))
    b = np.array([style_features(text) for text in second], dtype=np.float64).reshape(-1, len(FEATURES))
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)


__all__ = ["FEATURES", "style_differences", "style_features"]
