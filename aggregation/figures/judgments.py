"""A project's judgments as arrays, and the pieces of maths every figure shares on that layout. Pure numpy.

Layout (filled by :func:`aggregation.loading.judgments_load`, or by hand in a notebook): items on axis 0, responses
by stored position on axis 1, criteria on axis 2 and annotator *slots* on the last axis: slot k of an item is its
k-th annotation (by annotator id), so the last axis is as long as the most annotations on any item, not as long as
the project's annotator list. ``slot_annotator`` says which annotator fills each slot; weights are spread onto
slots from it.

Modes. IFS annotations aggregate as IFS values. Binary and Likert annotations are projected onto the signed
preference s ∈ [−1, 1] (+1 = position 0 preferred; :mod:`projects.preference` is the one rule) and their headline
figures come from pseudo-scores S₀ = s̄, S₁ = −s̄ (binary items with more than two responses: S_r = 2·share_r − 1
with ties shared equally), so p_best = 0.5 + |s̄|/2 and margin = 2|s̄| mean the same as for IFS, where
s = (S₀ − S₁)/2. We chose NOT to invent IFS values for them: their ResponseAggregate rows and hesitation stay
empty, because a click carries no hesitation and a made-up (1, 0)/(0, 1) would read as full certainty. Their item
agreement is the share of pairs of annotators with the same preference (choice, or sign of s), and ``vote_tie``
says when the unweighted votes split evenly (the weighted s̄ may still lean one way). Only the annotator weights
use a degenerate IFS for them (response 0: (max(s, 0), max(−s, 0)), response 1 mirrored), so that leave-one-out
agreement and gold accuracy have something to measure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from aggregation.figures.settings import FigureSettings
from aggregation.maths import agreement as agreement_maths
from projects import preference

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

TIE = preference.TIE
#: Stands for "no binary choice" in the loaded rows.
NO_BINARY = -99


@dataclass
class Judgments:
    """A project's (or some items') judgments as arrays; see the module docstring for the layout."""

    settings: FigureSettings
    item_ids: IntArray  # (I,) sorted
    gold: IntArray  # (I,) gold position, TIE, or ifs.UNDEFINED
    n_responses: IntArray  # (I,)
    response_ids: IntArray  # (I, R), 0 where the item has no response at that position
    criterion_ids: IntArray  # (C,) in the project's order
    criterion_weights: FloatArray  # (C,)
    annotator_ids: IntArray  # (A,) sorted
    annotation_ids: IntArray  # (N,) sorted by (item, annotator)
    annotation_item: IntArray  # (N,) item index
    annotation_annotator: IntArray  # (N,) annotator index
    annotation_slot: IntArray  # (N,)
    time_spent_ms: IntArray  # (N,)
    mu: FloatArray  # (I, R, C, K) in [0, 1]
    nu: FloatArray
    present: BoolArray
    slot_annotator: IntArray  # (I, K), −1 where empty
    binary: FloatArray  # (I, K) choice, NaN where none
    likert: FloatArray  # (I, K) value, NaN where none
    both_bad: BoolArray | None = None  # (I, K) a binary "both bad" (its choice is a tie); None: not loaded

    @property
    def slot_present(self) -> BoolArray:
        return np.asarray(self.slot_annotator >= 0)

    @property
    def n_annotators(self) -> IntArray:
        return np.asarray(self.slot_present.sum(axis=1), dtype=np.int64)


def signed_preferences(data: Judgments) -> FloatArray:
    """s ∈ [−1, 1] per (item, slot), NaN where undefined: from IFS values when the annotation has them, else from
    the binary choice, else from the Likert value. Only items with exactly two responses get one."""
    n_items, n_slots = data.slot_annotator.shape
    s = np.full((n_items, n_slots), np.nan)
    if n_slots == 0:
        return s
    binary_ok = np.isin(data.binary, (0.0, 1.0, float(TIE)))
    s = np.where(binary_ok, preference.binary_signed(np.nan_to_num(data.binary)), s)
    points = int(data.settings.likert_points)
    likert_ok = ~np.isnan(data.likert) & (data.likert >= 1) & (data.likert <= points)
    if likert_ok.any():
        s = np.where(likert_ok & np.isnan(s), preference.likert_signed(np.nan_to_num(data.likert, nan=1.0), points), s)
    if data.criterion_ids.size and data.present.any():
        pair = data.present[:, :2]
        ifs_s = agreement_maths.signed_preference_ifs(data.mu[:, :2], data.nu[:, :2], data.criterion_weights, mask=pair)
        s = np.where(np.isnan(ifs_s), s, ifs_s)
    s[data.n_responses != 2] = np.nan
    return s


def judgment_kinds(data: Judgments) -> dict[str, int]:
    """How many labels say "no preference" and why: a binary tie between answers, a binary "both bad", and IFS
    labels that oppose every response on every criterion (μ < ν everywhere: both bad by the sliders) or support
    every one (μ > ν everywhere: both good). The preference figures read the first two as one tie; the dashboard
    and the KTO export keep them apart."""
    both_bad = data.both_bad if data.both_bad is not None else np.zeros(data.binary.shape, dtype=bool)
    binary_tie = (data.binary == float(TIE)) & ~both_bad
    labelled = data.present.any(axis=(1, 2))  # (I, K): the slot has IFS values
    opposed = np.where(data.present, data.mu < data.nu, True).all(axis=(1, 2)) & labelled
    supported = np.where(data.present, data.mu > data.nu, True).all(axis=(1, 2)) & labelled
    return {
        "binary_ties": int(binary_tie.sum()),
        "binary_both_bad": int(both_bad.sum()),
        "ifs_all_opposed": int(opposed.sum()),
        "ifs_all_supported": int(supported.sum()),
    }


def slot_weights(data: Judgments, annotator_weight: FloatArray) -> FloatArray:
    """Weights per (item, slot); an item whose annotators all weigh zero falls back to equal weights."""
    slot_present = data.slot_present
    weight = np.where(slot_present, annotator_weight[np.maximum(data.slot_annotator, 0)], 0.0)
    unweighted = (weight.sum(axis=1) <= 0.0) & slot_present.any(axis=1)
    weight[unweighted] = slot_present[unweighted]
    return np.asarray(weight, dtype=np.float64)


def optional(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None
