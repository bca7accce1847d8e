"""Per-annotator figures: the weight of paper Eq. 8 with the project's coefficients and its parts, the iterative
consensus weight, labels, median time and mean hesitation. Pure numpy on
:class:`aggregation.figures.judgments.Judgments`.

Consistency needs repeat judgments of the same item by the same annotator, which this data model does not hold (one
annotation per annotator × item, revisions are corrections, not repeats): it is left empty and Eq. 8 renormalises
its coefficient away (see aggregation.maths.weights). The hesitation-variance proxy is not used, so no quality score is
built from hesitation. ``weight`` is normalised to sum 1 over the project's annotators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aggregation.figures.judgments import BoolArray, FloatArray, IntArray, Judgments, signed_preferences
from aggregation.figures.settings import FigureSettings
from aggregation.maths import weights as weights_maths


@dataclass
class AnnotatorFigures:
    """Per annotator, in the order of ``Judgments.annotator_ids``."""

    weight: FloatArray
    consistency: FloatArray
    expertise: FloatArray
    agreement: FloatArray
    n_gold: IntArray  # gold items each annotator's expertise is measured on
    consensus_weight: FloatArray
    n_labels: IntArray
    median_time_ms: FloatArray
    mean_hesitation: FloatArray


def annotator_layout(data: Judgments) -> tuple[FloatArray, FloatArray, BoolArray, FloatArray]:
    """(I, R, C, A) arrays over the project's annotators, as aggregation.maths.weights needs them, and criterion
    weights.

    Projects without slider values get the degenerate IFS of their signed preferences (aggregation.figures.judgments).
    """
    n_items = data.slot_annotator.shape[0]
    n_annotators = data.annotator_ids.size
    items, slots = np.nonzero(data.slot_present)
    annotators = data.slot_annotator[items, slots]
    if data.present.any():
        n_positions, n_criteria = data.mu.shape[1], data.mu.shape[2]
        shape = (n_items, n_positions, n_criteria, n_annotators)
        mu, nu, present = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
        mu[items, :, :, annotators] = data.mu[items, :, :, slots]
        nu[items, :, :, annotators] = data.nu[items, :, :, slots]
        present[items, :, :, annotators] = data.present[items, :, :, slots]
        return mu, nu, present, data.criterion_weights
    s = signed_preferences(data)
    shape = (n_items, 2, 1, n_annotators)
    mu, nu, present = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    value = s[items, slots]
    known = ~np.isnan(value)
    items, annotators, value = items[known], annotators[known], value[known]
    mu[items, 0, 0, annotators] = np.maximum(value, 0.0)
    nu[items, 0, 0, annotators] = np.maximum(-value, 0.0)
    mu[items, 1, 0, annotators] = np.maximum(-value, 0.0)
    nu[items, 1, 0, annotators] = np.maximum(value, 0.0)
    present[items, :, 0, annotators] = True
    return mu, nu, present, np.ones(1)


def coefficients(settings: FigureSettings) -> tuple[float, float, float]:
    raw = np.array([settings.weight_consistency, settings.weight_expertise, settings.weight_agreement], dtype=float)
    if not np.all(np.isfinite(raw)) or raw.sum() <= 0:
        return weights_maths.DEFAULT_COEFFICIENTS
    raw = raw / raw.sum()
    return float(raw[0]), float(raw[1]), float(raw[2])


def per_annotator_median(group: IntArray, values: IntArray, n_groups: int) -> FloatArray:
    order = np.lexsort((values, group))
    sorted_values = values[order].astype(np.float64)
    counts = np.bincount(group, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    medians = np.full(n_groups, np.nan)
    has = counts > 0
    low = starts[has] + (counts[has] - 1) // 2
    high = starts[has] + counts[has] // 2
    medians[has] = 0.5 * (sorted_values[low] + sorted_values[high])
    return medians


def annotator_figures_compute(
    data: Judgments, *, repeats: tuple[FloatArray, FloatArray, BoolArray] | None = None
) -> AnnotatorFigures:
    """Every annotator's figures; call only with at least one annotator. ``repeats``: their answered repeats in the
    layout of :func:`annotator_layout` (μ, ν, mask), the source of Eq. 8's consistency part; None when there are none.
    """
    n_annotators = data.annotator_ids.size
    mu, nu, present, criterion_weights = annotator_layout(data)
    repeat_mu, repeat_nu, repeat_mask = repeats if repeats is not None else (None, None, None)
    eq8 = weights_maths.annotator_weights(
        mu,
        nu,
        present,
        coefficients=coefficients(data.settings),
        gold=data.gold,
        criterion_weights=criterion_weights,
        tolerance=data.settings.tie_tolerance,
        consistency_source="repeats",
        repeat_mu=repeat_mu,
        repeat_nu=repeat_nu,
        repeat_mask=repeat_mask,
    )
    if present.any():
        consensus_weight = weights_maths.iterative_consensus_weights(mu, nu, present).weight
    else:
        consensus_weight = np.full(n_annotators, np.nan)

    items, slots = np.nonzero(data.slot_present)
    slot_pi = np.where(data.present, 1.0 - data.mu - data.nu, 0.0).sum(axis=(1, 2))[items, slots]
    slot_count = data.present.sum(axis=(1, 2))[items, slots]
    owner = data.slot_annotator[items, slots]
    pi_sum = np.bincount(owner, weights=slot_pi, minlength=n_annotators)
    pi_count = np.bincount(owner, weights=slot_count, minlength=n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_hesitation = pi_sum / pi_count
    return AnnotatorFigures(
        weight=np.asarray(eq8.weight, dtype=np.float64),
        consistency=np.asarray(eq8.consistency, dtype=np.float64),
        expertise=np.asarray(eq8.expertise, dtype=np.float64),
        agreement=np.asarray(eq8.agreement, dtype=np.float64),
        n_gold=np.asarray(eq8.n_gold, dtype=np.int64),
        consensus_weight=np.asarray(consensus_weight, dtype=np.float64),
        n_labels=np.bincount(data.annotation_annotator, minlength=n_annotators).astype(np.int64),
        median_time_ms=per_annotator_median(data.annotation_annotator, data.time_spent_ms, n_annotators),
        mean_hesitation=np.asarray(mean_hesitation, dtype=np.float64),
    )
