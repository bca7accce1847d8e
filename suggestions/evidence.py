"""The evidence of answered label requests, read once for everyone who needs it: the rows (with whether the person
had seen the model's answer), each kind's latest draw, and the Hájek estimate of a draw's agreement from its blind
answers with their recorded inclusion probabilities. The certification figures, the suggestion figures' split of
blind labels by source and the contracts all read it here."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.db.models import Exists, OuterRef

from aggregation.maths import accuracy, certification
from annotation.models import Annotation, LabelRequest
from projects.models import Project


def answered_rows(project: Project) -> list[dict[str, Any]]:
    shown = Annotation.objects.filter(item=OuterRef("item"), annotator=OuterRef("annotator"), suggestion_shown=True)
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in LabelRequest.objects.filter(project=project, status=LabelRequest.Status.ANSWERED)
        .annotate(shown=Exists(shown))
        .order_by("answered_at", "pk")
        .values(
            "kind",
            "draw",
            "item_id",
            "inclusion_probability",
            "stratum",
            "confidence",
            "machine_preferred",
            "final_preferred",
            "shown",
            "item__gold_position",
        )
    ]
    return rows


def latest_draw(project: Project, kind: str) -> int | None:
    return (
        LabelRequest.objects.filter(project=project, kind=kind).order_by("-draw").values_list("draw", flat=True).first()
    )


def population_size(project: Project, kind: str, draw: int) -> float:
    """Σ 1/π over the draw's distinct items: exactly N for a stratified draw, N's unbiased estimate for Poisson."""
    rows = (
        LabelRequest.objects.filter(project=project, kind=kind, draw=draw)
        .values_list("item_id", "inclusion_probability")
        .distinct()
    )
    return float(sum(1.0 / p for _, p in rows if p))


def per_item(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Per item of the rows, in order of its first answer: agreement share, labels, π, stratum, confidence, gold."""
    order: list[int] = []
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["item_id"] not in grouped:
            order.append(row["item_id"])
        grouped[row["item_id"]].append(row)
    first = [grouped[i][0] for i in order]
    share = [np.mean([r["final_preferred"] == r["machine_preferred"] for r in grouped[i]]) for i in order]
    gold = [
        np.nan if f["item__gold_position"] is None else float(f["machine_preferred"] == f["item__gold_position"])
        for f in first
    ]
    return {
        "share": np.asarray(share, dtype=np.float64),
        "labels": np.asarray([len(grouped[i]) for i in order], dtype=np.float64),
        "probability": np.asarray([f["inclusion_probability"] for f in first], dtype=np.float64),
        "stratum": np.asarray([f["stratum"] if f["stratum"] is not None else 0 for f in first], dtype=np.int64),
        "confidence": np.asarray([np.nan if f["confidence"] is None else f["confidence"] for f in first]),
        "gold": np.asarray(gold, dtype=np.float64),
    }


def request_evidence(rows: list[dict[str, Any]], kind: str, draw: int | None) -> list[dict[str, Any]]:
    if draw is None or not rows:
        return []
    kinds = np.array([r["kind"] for r in rows], dtype=object)
    blind = np.array([not r["shown"] for r in rows], dtype=bool)
    use = certification.evidence_mask(kinds, blind)
    return [r for r, ok in zip(rows, use, strict=True) if ok and r["kind"] == kind and r["draw"] == draw]


def request_hajek(evidence: list[dict[str, Any]]) -> accuracy.DesignEstimate:
    """The Hájek estimate of the model's agreement with blind people from one draw's evidence (its own π)."""
    if not evidence:
        return accuracy.hajek(np.array([]), np.array([]))
    d = per_item(evidence)
    return accuracy.hajek(d["share"], d["probability"], strata=d["stratum"], trials=d["labels"])


def request_estimates(*, project: Project) -> dict[str, dict[str, Any]]:
    """Per blind request kind with a population-wide draw (calibration, certification): the Hájek estimate of the
    latest draw, the form blind agreement's sources split shows beside the random sample's figure."""
    rows = answered_rows(project)
    out: dict[str, dict[str, Any]] = {}
    for kind in (LabelRequest.Kind.CALIBRATION, LabelRequest.Kind.CERTIFICATION):
        draw = latest_draw(project, kind)
        out[kind.value] = {"draw": draw, **request_hajek(request_evidence(rows, kind, draw)).as_dict()}
    return out
