"""Hesitation calibration of an IFS project, from the database: does each person's hesitation predict when they
disagree with the others? The maths is in aggregation.maths.hesitation_calibration; docs/guides/contracts.md explains
the figures.

Per IFS annotation: its hesitation π, the mean of 1 − μ − ν over every value it gave (responses × criteria); its
preferred response from the criterion-weighted S = μ − ν with the project's tie tolerance (as everywhere in
Penumbra); and its disagreement d, the share of the *other* annotations of the item whose preferred response differs.
Annotations with a missing value, and items with one annotation, give no pair (π, d).

The project's figure pools every person; a person's own figure needs at least :data:`MINIMUM_LABELS` labels (their
slope is otherwise withheld: too few to say whether their π means anything). Read on request for a lead (else 404),
not stored: one query over the project's values.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from aggregation.maths import hesitation_calibration as hc
from aggregation.maths.ifs import UNDEFINED, preferred_response
from annotation.models import JudgmentValue
from projects.models import PERMILLE, Project
from projects.selectors import project_get_for_lead

AnyUser = AbstractBaseUser | AnonymousUser
MINIMUM_LABELS = 30


def hesitation_pairs(*, project: Project) -> dict[str, np.ndarray]:
    """(π, d, item, annotator) per IFS annotation of the project (module docstring)."""
    weights = dict(project.criteria.values_list("id", "weight"))
    total = sum(weights.values()) or 1.0
    rows = list(
        JudgmentValue.objects.filter(annotation__project=project)
        .values_list(
            "annotation_id",
            "annotation__item_id",
            "annotation__annotator_id",
            "response__position",
            "criterion_id",
            "mu",
            "nu",
        )
        .order_by()
    )
    empty = np.zeros(0)
    if not rows:
        return {"hesitation": empty, "disagreement": empty, "item": empty, "annotator": empty}
    ids = sorted({r[0] for r in rows})
    at = {a: k for k, a in enumerate(ids)}
    width = max(2, max(r[3] for r in rows) + 1)
    score = np.zeros((len(ids), width))
    weight_seen = np.zeros((len(ids), width))
    hesitation_sum = np.zeros(len(ids))
    count = np.zeros(len(ids))
    item = np.zeros(len(ids), dtype=np.int64)
    annotator = np.zeros(len(ids), dtype=np.int64)
    for annotation_id, item_id, annotator_id, position, criterion, mu, nu in rows:
        k = at[annotation_id]
        w = weights.get(criterion, 0.0) / total
        score[k, position] += w * (mu - nu) / PERMILLE
        weight_seen[k, position] += w
        hesitation_sum[k] += (PERMILLE - mu - nu) / PERMILLE
        count[k] += 1
        item[k], annotator[k] = item_id, annotator_id
    valued = weight_seen > 1 - 1e-6
    present = weight_seen > 0
    scores = np.where(valued, score, np.where(present, np.nan, -np.inf))
    preferred = preferred_response(scores, tolerance=project.tie_tolerance, axis=1)
    keep = preferred != UNDEFINED
    by_item: dict[int, list[int]] = defaultdict(list)
    for row in np.flatnonzero(keep).tolist():
        by_item[int(item[row])].append(row)
    disagreement = np.full(len(ids), np.nan)
    for members in by_item.values():
        if len(members) < 2:
            continue
        choices = preferred[members]
        for m, choice in zip(members, choices, strict=True):
            disagreement[m] = (np.sum(choices != choice)) / (len(members) - 1)
    use = ~np.isnan(disagreement)
    return {
        "hesitation": np.clip(hesitation_sum[use] / count[use], 0.0, 1.0),
        "disagreement": disagreement[use],
        "item": item[use],
        "annotator": annotator[use],
    }


def _figure(pairs: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, Any]:
    h, d, i = pairs["hesitation"][mask], pairs["disagreement"][mask], pairs["item"][mask]
    return {
        "labels": int(mask.sum()),
        "diagram": [b.as_dict() for b in hc.reliability_diagram(h, d, i)],
        "slope": hc.hesitation_slope(h, d, i).as_dict(),
    }


def hesitation_figures(*, project: Project) -> dict[str, Any]:
    """The project's reliability diagram and slope, and each person's with enough labels (module docstring)."""
    if project.mode != Project.Mode.IFS:
        return {"withheld": "only IFS judgments state a hesitation", "project": None, "annotators": []}
    pairs = hesitation_pairs(project=project)
    everyone = np.ones(pairs["hesitation"].size, dtype=bool)
    people = []
    for person in np.unique(pairs["annotator"]).tolist():
        mask = pairs["annotator"] == person
        if mask.sum() < MINIMUM_LABELS:
            people.append({"annotator": int(person), "labels": int(mask.sum()), "withheld": f"fewer than "
                           f"{MINIMUM_LABELS} labels shared with someone"})  # fmt: skip
            continue
        people.append({"annotator": int(person), **_figure(pairs, mask)})
    return {"withheld": None, "project": _figure(pairs, everyone) if everyone.any() else None, "annotators": people}


def hesitation_for_lead(*, user: AnyUser, project_id: int) -> dict[str, Any]:
    """The figures for a lead of the project (else 404)."""
    return hesitation_figures(project=project_get_for_lead(user=user, project_id=project_id))


__all__ = ["MINIMUM_LABELS", "hesitation_figures", "hesitation_for_lead", "hesitation_pairs"]
