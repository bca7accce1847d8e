"""Project figures: agreement with intervals, the plots (hesitation, agreement over time, weights) and progress.

``agreement``: pairwise_with_ties, pairwise_without_ties, alpha_interval, alpha_nominal (all on the signed
preference, comparable across modes, tie band = tie_tolerance/2) and ifs (mean per-item IFS agreement, corrected
Eq. 11), each {"value", "n", "ci": [low, high]} with an interval over items: closed forms for the first four
(aggregation.maths.intervals, checked for coverage by simulation), a percentile bootstrap for the mean IFS agreement.
The maths runs on the loaded :class:`aggregation.figures.judgments.Judgments`; the few extras a plot names (criterion
names, usernames, creation days, skips) are read here in one small query each.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models import Count
from django.db.models.functions import TruncDate

from aggregation.figures.judgments import FloatArray, Judgments, judgment_kinds, optional, signed_preferences
from aggregation.maths import agreement as agreement_maths
from aggregation.maths import ifs, minimums
from aggregation.models import AnnotatorAggregate
from annotation.models import Annotation, Assignment
from projects.models import PERMILLE, Criterion, Item

#: Bootstrap replicates for the project's agreement intervals: N_BOOT up to BOOT_FULL_UNITS items, then fewer
#: (never under N_BOOT_MIN) so the work stays flat; on that many items the interval is narrow and 200 replicates
#: place its ends to within a small fraction of its width.
N_BOOT = 1000
N_BOOT_MIN = 200
BOOT_FULL_UNITS = 20_000


def n_boot_for(n_units: int) -> int:
    return max(N_BOOT_MIN, min(N_BOOT, N_BOOT * BOOT_FULL_UNITS // max(n_units, 1)))


#: Points on the agreement-over-time plot (days; evenly thinned when there are more).
TIME_POINTS = 30
HESITATION_BINS = 10


def _mean_with_ci(values: FloatArray, seed: int) -> dict[str, Any]:
    """Mean of the finite values with a percentile bootstrap interval over them (vectorised, chunked)."""
    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return {"value": None, "n": 0, "ci": None}
    rng = np.random.default_rng(seed)
    n_boot = n_boot_for(n)
    chunk = max(1, min(n_boot, 2_000_000 // n))
    replicates: list[FloatArray] = []
    done = 0
    while done < n_boot:
        rows = min(chunk, n_boot - done)
        replicates.append(finite[rng.integers(0, n, size=(rows, n))].mean(axis=1))
        done += rows
    low, high = np.quantile(np.concatenate(replicates), [0.025, 0.975])
    return {"value": float(finite.mean()), "n": n, "ci": [float(low), float(high)]}


def _hesitation_histograms(data: Judgments) -> dict[str, Any]:
    """Counts of π per criterion in HESITATION_BINS equal bins of [0, 1]; a bin holds its lower edge, the last one
    also 1. Binned in whole per-mille, as stored, so a value on an edge (π = 0.3) never falls by rounding."""
    edges = np.linspace(0, PERMILLE, HESITATION_BINS + 1)
    names = dict(Criterion.objects.filter(project_id=data.settings.project_id).values_list("pk", "name"))
    pi = np.rint(PERMILLE * (1.0 - data.mu - data.nu))
    criteria = []
    for c, criterion_id in enumerate(data.criterion_ids.tolist()):
        values = pi[:, :, c, :][data.present[:, :, c, :]]
        counts, _ = np.histogram(values, bins=edges)
        criteria.append(
            {
                "criterion_id": criterion_id,
                "name": names.get(criterion_id, ""),
                "counts": counts.tolist(),
                "n": int(values.size),
            }
        )
    return {"bins": [round(float(e) / PERMILLE, 6) for e in edges], "criteria": criteria}


def _agreement_over_time(data: Judgments, s: FloatArray, tie_band: float) -> list[dict[str, Any]]:
    """Cumulative agreement at the end of each day labels were created (thinned to TIME_POINTS days)."""
    if data.annotation_ids.size == 0:
        return []
    created = (
        dict(Annotation.objects.filter(pk__in=data.annotation_ids.tolist()).values_list("pk", TruncDate("created_at")))
        if data.annotation_ids.size <= 50_000
        else dict(
            Annotation.objects.filter(project_id=data.settings.project_id).values_list("pk", TruncDate("created_at"))
        )
    )
    day = np.array([created.get(int(pk)) for pk in data.annotation_ids], dtype="datetime64[D]")
    slot_day = np.full(data.slot_annotator.shape, np.datetime64("NaT"), dtype="datetime64[D]")
    slot_day[data.annotation_item, data.annotation_slot] = day
    days = np.unique(day[~np.isnat(day)])
    if days.size > TIME_POINTS:
        days = days[np.unique(np.linspace(0, days.size - 1, TIME_POINTS).round().astype(int))]
    points = []
    for d in days:
        upto = data.slot_present & (slot_day <= d)
        known = upto & ~np.isnan(s)
        alpha = agreement_maths.krippendorff_alpha_interval(np.where(known, s, 0.0), known)
        pairwise = agreement_maths.pairwise_agreement(
            agreement_maths.preference_sign(np.where(known, s, np.nan), tie_band), known, with_ties=True
        )
        ifs_value = None
        if data.present.any():
            per_item = ifs.ifs_agreement(data.mu, data.nu, data.present & upto[:, None, None, :])
            finite = per_item[np.isfinite(per_item)]
            ifs_value = float(finite.mean()) if finite.size else None
        points.append(
            {
                "date": str(d),
                "n_labels": int(upto.sum()),
                # Readers withhold the point's figures below aggregation.maths.minimums.MIN_OVERLAP_ITEMS.
                "overlap_items": int((known.sum(axis=1) >= minimums.MIN_ANNOTATORS).sum()),
                "alpha_interval": optional(alpha),
                "pairwise_with_ties": pairwise.value,
                "ifs": ifs_value,
            }
        )
    return points


def _weights_plot(project_id: int) -> list[dict[str, Any]]:
    rows = AnnotatorAggregate.objects.filter(project_id=project_id).order_by("-weight", "annotator_id")
    return [
        {
            "annotator_id": row["annotator_id"],
            "username": row["annotator__username"],
            "weight": row["weight"],
            "consistency": row["consistency"],
            # Withheld below its minimum of gold comparisons, as every reader of the stored rows does.
            "expertise": row["expertise"] if minimums.expertise_needs(row["expertise_n"]) is None else None,
            "expertise_n": row["expertise_n"],
            "agreement": row["agreement"],
            "consensus_weight": row["consensus_weight"],
            "n_labels": row["n_labels"],
        }
        for row in rows.values(
            "annotator_id",
            "annotator__username",
            "weight",
            "consistency",
            "expertise",
            "expertise_n",
            "agreement",
            "consensus_weight",
            "n_labels",
        )
    ]


def _progress(data: Judgments) -> dict[str, Any]:
    project_id = data.settings.project_id
    overlap = int(data.settings.overlap)
    per_item = data.n_annotators
    usernames = dict(get_user_model().objects.filter(pk__in=data.annotator_ids.tolist()).values_list("pk", "username"))
    labels = np.bincount(data.annotation_annotator, minlength=data.annotator_ids.size)
    skipped = dict(
        Assignment.objects.filter(project_id=project_id, status=Assignment.Status.SKIPPED)
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("annotator_id", "n")
    )
    for annotator_id in skipped:
        if annotator_id not in usernames:
            usernames[annotator_id] = ""
    if skipped:
        usernames.update(get_user_model().objects.filter(pk__in=list(skipped)).values_list("pk", "username"))
    labelled = {int(a): int(n) for a, n in zip(data.annotator_ids.tolist(), labels.tolist(), strict=True)}
    annotators = [
        {
            "annotator_id": annotator_id,
            "username": usernames.get(annotator_id, ""),
            "labels": labelled.get(annotator_id, 0),
            "skipped": int(skipped.get(annotator_id, 0)),
        }
        for annotator_id in sorted(set(labelled) | set(skipped))
    ]
    # Items a lead sent back want more than the overlap (annotation.notes.services.item_send_back); few rows.
    extra = dict(Item.objects.filter(project_id=project_id, extra_labels__gt=0).values_list("id", "extra_labels"))
    wanted = np.full(data.item_ids.size, overlap, dtype=np.int64)
    if extra:
        wanted += np.array([extra.get(int(i), 0) for i in data.item_ids.tolist()], dtype=np.int64)
    return {
        "items_total": int(data.item_ids.size),
        "items_done": int((per_item >= wanted).sum()),
        "overlap": overlap,
        "labels_needed": int(wanted.sum()),
        "labels_done": int(np.minimum(per_item, wanted).sum()),
        "labels_total": int(per_item.sum()),
        "annotators": annotators,
        "judgment_kinds": judgment_kinds(data),
    }


def project_figures_compute(data: Judgments) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(agreement, plots, progress) of a whole project's judgments; the weights plot reads the stored weights."""
    settings = data.settings
    s = signed_preferences(data)
    known = data.slot_present & ~np.isnan(s)
    tie_band = settings.tie_tolerance / 2.0
    seed = int(settings.seed) % (2**32)
    figures = agreement_maths.cross_mode_agreement(np.where(known, s, 0.0), known, tie_band=tie_band)
    # Stored with each figure so every reader withholds it by the same rule (aggregation.maths.minimums), and the
    # figure itself stays exact for whoever computes on it.
    overlap = int((known.sum(axis=1) >= minimums.MIN_ANNOTATORS).sum())
    agreement: dict[str, Any] = {name: {**estimate.as_dict(), "items": overlap} for name, estimate in figures.items()}
    if data.present.any():
        ifs_figure = _mean_with_ci(ifs.ifs_agreement(data.mu, data.nu, data.present), seed)
        # The mean runs over the items with a per-item IFS agreement, i.e. those two or more people labelled.
        agreement["ifs"] = {**ifs_figure, "items": ifs_figure["n"]}
    else:
        agreement["ifs"] = {"value": None, "n": 0, "ci": None, "items": 0}
    plots = {
        "hesitation": _hesitation_histograms(data),
        "agreement_over_time": _agreement_over_time(data, s, tie_band),
        "weights": _weights_plot(settings.project_id),
    }
    return agreement, plots, _progress(data)
