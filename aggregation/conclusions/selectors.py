"""Reads for the conclusions page, API and dataset card: a project's leaderboard, prediction-powered figures and
annotator-population agreement, for its leads only (anyone else gets 404 from ``project_get_for_lead``).

The figures are computed from the labels when asked (:mod:`aggregation.conclusions.figures`, pure numpy: a fit of a
few models takes milliseconds, the read of the labels most of the time) and kept in the shared cache under a key
that changes with every label, suggestion or figure setting, so a page reload does not compute them again.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max
from django.http import Http404

from aggregation.conclusions.figures import NO_SUGGESTION, Inputs, conclusions
from aggregation.loading import judgments_load, newest_annotation
from annotation.models import Annotation, LabelRequest
from projects.models import Item, Project, Response, Suggestion
from projects.selectors import AnyUser, project_get_for_lead

Sample = Literal["blind", "certification", "audit"]
SAMPLES: tuple[Sample, ...] = ("blind", "certification", "audit")
CACHE_SECONDS = 600


def _criterion_index(project: Project, criterion_id: int | None) -> int | None:
    if criterion_id is None:
        return None
    ids = list(project.criteria.order_by("position", "pk").values_list("pk", flat=True))
    if criterion_id not in ids:
        raise Http404("No such criterion in this project.")
    return ids.index(criterion_id)


def _inputs(project: Project, criterion: int | None, sample: Sample) -> Inputs:
    data = judgments_load(project=project)
    item_index = {int(pk): k for k, pk in enumerate(data.item_ids)}
    names = sorted(
        {n for n in Response.objects.filter(item__project_id=project.pk).values_list("model_name", flat=True) if n}
    )
    model_index = {name: k for k, name in enumerate(names)}
    response_model = np.full(data.response_ids.shape, -1, dtype=np.int64)
    for item_id, position, name in Response.objects.filter(item__project_id=project.pk).values_list(
        "item_id", "position", "model_name"
    ):
        if name and int(item_id) in item_index:
            response_model[item_index[int(item_id)], position] = model_index[name]

    shown = dict(Annotation.objects.filter(project_id=project.pk).values_list("pk", "suggestion_shown"))
    slot_blind = np.zeros(data.slot_annotator.shape, dtype=bool)
    if data.annotation_ids.size:
        blind = np.array([not shown.get(int(pk), True) for pk in data.annotation_ids], dtype=bool)
        slot_blind[data.annotation_item, data.annotation_slot] = blind

    llm = np.full(data.item_ids.size, NO_SUGGESTION, dtype=np.int64)
    for item_id, preferred in Suggestion.objects.filter(
        item__project_id=project.pk, status=Suggestion.Status.OK
    ).values_list("item_id", "preferred_position"):
        if int(item_id) in item_index and preferred is not None:
            llm[item_index[int(item_id)]] = preferred

    probability = np.full(data.item_ids.size, np.nan)
    rows: list[tuple[int, float | None]]
    if sample == "blind":
        rows = list(
            Item.objects.filter(project_id=project.pk, is_blind=True).values_list("pk", "blind_inclusion_probability")
        )
    else:
        rows = list(
            LabelRequest.objects.filter(project_id=project.pk, kind=sample, status=LabelRequest.Status.ANSWERED)
            .values("item_id")
            .annotate(p=Max("inclusion_probability"))
            .values_list("item_id", "p")
        )
    for item_id, p in rows:
        if int(item_id) in item_index and p:
            probability[item_index[int(item_id)]] = float(p)
    return Inputs(data, names, response_model, slot_blind, llm, probability, criterion)


def _cache_key(project: Project, criterion_id: int | None, sample: Sample) -> str:
    suggestions = Suggestion.objects.filter(item__project_id=project.pk).aggregate(
        n=Count("pk"), newest=Max("updated_at")
    )
    labels = Annotation.objects.filter(project_id=project.pk).aggregate(n=Count("pk"))
    parts = (
        project.pk,
        project.settings_version,
        newest_annotation(project.pk),
        labels["n"],
        suggestions["n"],
        suggestions["newest"],
        project.items.count(),
        criterion_id,
        sample,
    )
    return "conclusions:" + hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


def conclusions_for_project(
    *, project: Project, criterion_id: int | None = None, sample: Sample = "blind"
) -> dict[str, Any]:
    """The conclusions of a project the caller already may read as a lead (the dataset card's path)."""
    if sample not in SAMPLES:
        raise ValueError(f"sample must be one of {', '.join(SAMPLES)}")
    criterion = _criterion_index(project, criterion_id)
    key = _cache_key(project, criterion_id, sample)
    found = cache.get(key)
    if found is not None:
        return dict(found)
    figures = conclusions(_inputs(project, criterion, sample))
    figures["sample"] = sample
    figures["criterion_id"] = criterion_id
    cache.set(key, figures, CACHE_SECONDS)
    return figures


def conclusions_get_for_lead(
    *, user: AnyUser, project_id: int, criterion_id: int | None = None, sample: Sample = "blind"
) -> tuple[Project, dict[str, Any]]:
    """The project (404 unless the user leads it) and its conclusions."""
    project = project_get_for_lead(user=user, project_id=project_id)
    return project, conclusions_for_project(project=project, criterion_id=criterion_id, sample=sample)
