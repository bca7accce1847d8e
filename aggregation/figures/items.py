"""Per-item figures of a set of judgments: best and worst response, p_best, margin, hesitation, agreement, the
signed preference and vote ties, and for IFS judgments the aggregated values per operator. Pure numpy on
:class:`aggregation.figures.judgments.Judgments` (see there for the layout and how binary and Likert judgments are
read),
so a notebook can call :func:`item_figures_compute` on arrays it built itself."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aggregation.figures.judgments import (
    NO_BINARY,
    TIE,
    BoolArray,
    FloatArray,
    IntArray,
    Judgments,
    signed_preferences,
    slot_weights,
)
from aggregation.maths import agreement as agreement_maths
from aggregation.maths import ifs


def _best_and_worst(scores: FloatArray, exists: BoolArray, tolerance: float) -> tuple[IntArray, IntArray, FloatArray]:
    """Best and worst positions (TIE within tolerance, UNDEFINED if a score is missing) and S_best − S_worst."""
    high = np.where(exists, scores, -np.inf)
    low = np.where(exists, -scores, -np.inf)
    best = ifs.preferred_response(high, tolerance)
    worst = ifs.preferred_response(low, tolerance)
    with np.errstate(invalid="ignore"):
        spread = np.where(exists, scores, -np.inf).max(axis=1) - np.where(exists, scores, np.inf).min(axis=1)
    spread = np.where(best == ifs.UNDEFINED, np.nan, spread)
    return best, worst, spread


@dataclass
class ItemFigures:
    """Per item headline figures (I,) and per operator the aggregated values (I, R, C) and overall (I, R)."""

    best: IntArray
    worst: IntArray
    p_best: FloatArray
    margin: FloatArray
    hesitation: FloatArray
    agreement: FloatArray
    signed_preference: FloatArray
    vote_tie: BoolArray
    by_operator: dict[str, tuple[ifs.IFS, ifs.IFS]]


def item_figures_compute(data: Judgments, annotator_weight: FloatArray) -> ItemFigures:
    """All item figures for every operator, vectorised over the items of ``data``."""
    settings = data.settings
    slot_weight = slot_weights(data, annotator_weight)
    entry_weight = slot_weight[:, None, None, :]
    exists = data.response_ids > 0
    n_items, n_positions = exists.shape

    by_operator: dict[str, tuple[ifs.IFS, ifs.IFS]] = {}
    has_ifs = np.asarray(data.present.any(axis=(1, 2, 3)) if data.present.size else np.zeros(n_items), dtype=bool)
    if has_ifs.any():
        for operator in ifs.OPERATORS:
            per_criterion = ifs.aggregate(data.mu, data.nu, operator, w=entry_weight, mask=data.present)
            overall = ifs.combine_criteria(per_criterion.mu, per_criterion.nu, data.criterion_weights, axis=-1)
            by_operator[operator] = (per_criterion, overall)
        _, overall = by_operator[settings.aggregation_operator]
        ifs_scores = ifs.score(overall.mu, overall.nu)
        pi = 1.0 - data.mu - data.nu
        counts = data.present.sum(axis=(1, 2, 3))
        with np.errstate(invalid="ignore", divide="ignore"):
            hesitation = np.where(data.present, pi, 0.0).sum(axis=(1, 2, 3)) / counts
        agreement = ifs.ifs_agreement(data.mu, data.nu, data.present)
    else:
        ifs_scores = np.full((n_items, n_positions), np.nan)
        hesitation = np.full(n_items, np.nan)
        agreement = np.full(n_items, np.nan)

    s = signed_preferences(data)
    s_present = ~np.isnan(s)
    s_weight = np.where(s_present, slot_weight, 0.0)
    s_total = s_weight.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = (np.where(s_present, s, 0.0) * s_weight).sum(axis=1) / s_total
    mean_s = np.where(s_total > 0, mean_s, np.nan)

    # Pseudo-scores for items judged without sliders (see the module docstring).
    pseudo = np.full((n_items, n_positions), np.nan)
    pseudo[:, 0] = mean_s
    pseudo[:, 1] = -mean_s
    binary_ok = ~np.isnan(data.binary)
    if binary_ok.any() and n_positions > 2:
        choice = np.where(binary_ok, data.binary, NO_BINARY)
        weight = np.where(binary_ok, slot_weight, 0.0)
        one_hot = (choice[:, :, None] == np.arange(n_positions)[None, None, :]).astype(np.float64)
        one_hot += (choice == TIE)[:, :, None] / np.maximum(data.n_responses, 1)[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = (one_hot * weight[:, :, None]).sum(axis=1) / weight.sum(axis=1)[:, None]
        many = (data.n_responses > 2) & (weight.sum(axis=1) > 0)
        pseudo[many] = 2.0 * share[many] - 1.0
    scores = np.where(has_ifs[:, None], ifs_scores, pseudo)

    best, worst, spread = _best_and_worst(scores, exists, settings.tie_tolerance)
    vote_agreement, vote_tie = _vote_figures(data, s, has_ifs)
    return ItemFigures(
        best=best,
        worst=worst,
        p_best=0.5 + spread / 4.0,
        margin=spread,
        hesitation=hesitation,
        agreement=np.where(has_ifs, agreement, vote_agreement),
        signed_preference=mean_s,
        vote_tie=vote_tie,
        by_operator=by_operator,
    )


def _vote_figures(data: Judgments, s: FloatArray, has_ifs: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Agreement and vote ties of items judged without sliders (binary, Likert), from unweighted votes.

    Labels: the binary choice (a response position, or TIE), else the sign of s with the tie band τ/2 (the band of
    the project's cross-mode figures). Agreement is the share of pairs of annotators with the same label, a tie
    being a label of its own (NaN below two labels). The votes tie when no response has more votes than every other
    (votes for "tie" count for none): then annotator weights alone would pick a winner, and exports say so.
    """
    n_items, n_positions = data.response_ids.shape
    signs = agreement_maths.preference_sign(s, data.settings.tie_tolerance / 2)
    labels = np.where(np.isnan(data.binary), signs, data.binary)
    labels = np.where(data.slot_present, labels, np.nan)
    agreement = agreement_maths.pairwise_agreement_per_unit(labels, ~np.isnan(labels))
    votes = np.zeros((n_items, n_positions))
    if labels.size:
        # A binary choice names a position; a sign names position 0 (+1) or 1 (−1).
        position = np.where(np.isnan(data.binary), np.where(signs > 0, 0.0, np.where(signs < 0, 1.0, np.nan)), labels)
        votes = (position[:, :, None] == np.arange(n_positions)[None, None, :]).sum(axis=1).astype(np.float64)
    top = votes.max(axis=1, initial=0.0)
    shared_top = ((votes == top[:, None]) & (data.response_ids > 0)).sum(axis=1) >= 2
    vote_tie = ~has_ifs & (data.n_annotators > 0) & shared_top
    return np.where(has_ifs, np.nan, agreement), np.asarray(vote_tie, dtype=bool)


def position_or_none(x: int) -> int | None:
    return None if x == ifs.UNDEFINED else int(x)
