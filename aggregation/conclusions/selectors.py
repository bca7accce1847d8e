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
from aggregation.maths.leaderboard import DEFAULT_PRIOR
from aggregation.maths.style import FEATURES, style_features
from annotation.models import Annotation, LabelRequest
from projects.models import Item, Project, Response, Suggestion
from projects.selectors import AnyUser, project_get_for_lead

Sample = Literal["blind", "certification", "audit"]
SAMPLES: tuple[Sample, ...] = ("blind", "certification", "audit")
CACHE_SECONDS = 600
#: How leaderboard intervals group comparisons: the prompt's text (the default), the item, or ``metadata:<field>``
#: (an item metadata field, e.g. ``metadata:question_id``; an item without the field is a cluster of its own).
CLUSTERS = ("prompt", "item")
CLUSTER_METADATA = "metadata:"


def check_cluster(cluster: str) -> str:
    """The cluster rule, or ValueError naming what is allowed."""
    if cluster in CLUSTERS or (
        cluster.startswith(CLUSTER_METADATA) and 0 < len(cluster) - len(CLUSTER_METADATA) <= 100
    ):
        return cluster
    raise ValueError("cluster: prompt, item or metadata:<field>.")


def check_prior(prior: float) -> float:
    """The leaderboard's prior (0: the plain maximum-likelihood fit), or ValueError."""
    if not 0.0 <= prior <= 100.0:
        raise ValueError("prior: a number from 0 to 100 (0: the plain maximum-likelihood fit).")
    return prior


def _clusters(project: Project, item_ids: Any, cluster: str) -> Any:
    """(I,) cluster index per loaded item under the cluster rule."""
    if cluster == "item":
        return np.arange(len(item_ids), dtype=np.int64)
    field = cluster.removeprefix(CLUSTER_METADATA)
    rows = Item.objects.filter(project_id=project.pk).values_list("pk", "prompt", "metadata")
    key_of: dict[int, str] = {}
    for pk, prompt, metadata in rows:
        if cluster == "prompt":
            key_of[int(pk)] = "p:" + hashlib.sha256(prompt.encode()).hexdigest()
        else:
            value = metadata.get(field) if isinstance(metadata, dict) else None
            key_of[int(pk)] = f"m:{value!r}" if value is not None else f"i:{pk}"
    keys = [key_of.get(int(pk), f"i:{pk}") for pk in item_ids]
    return np.unique(np.array(keys, dtype=object), return_inverse=True)[1].astype(np.int64)


def _criterion_index(project: Project, criterion_id: int | None) -> int | None:
    if criterion_id is None:
        return None
    ids = list(project.criteria.order_by("position", "pk").values_list("pk", flat=True))
    if criterion_id not in ids:
        raise Http404("No such criterion in this project.")
    return ids.index(criterion_id)


def _inputs(
    project: Project, criterion: int | None, sample: Sample, cluster: str = "prompt", prior: float = DEFAULT_PRIOR
) -> Inputs:
    data = judgments_load(project=project)
    item_index = {int(pk): k for k, pk in enumerate(data.item_ids)}
    names = sorted(
        {n for n in Response.objects.filter(item__project_id=project.pk).values_list("model_name", flat=True) if n}
    )
    model_index = {name: k for k, name in enumerate(names)}
    response_model = np.full(data.response_ids.shape, -1, dtype=np.int64)
    response_style = np.zeros((*data.response_ids.shape, len(FEATURES)))
    for item_id, position, name, text in Response.objects.filter(item__project_id=project.pk).values_list(
        "item_id", "position", "model_name", "text"
    ):
        if int(item_id) in item_index:
            response_style[item_index[int(item_id)], position] = style_features(text)
            if name:
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
    return Inputs(
        data,
        names,
        response_model,
        slot_blind,
        llm,
        probability,
        criterion,
        cluster=_clusters(project, data.item_ids, cluster),
        response_style=response_style,
        prior=prior,
    )


def _cache_key(project: Project, criterion_id: int | None, sample: Sample, cluster: str, prior: float) -> str:
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
        cluster,
        prior,
    )
    return "conclusions:" + hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


def conclusions_for_project(
    *,
    project: Project,
    criterion_id: int | None = None,
    sample: Sample = "blind",
    cluster: str = "prompt",
    prior: float = DEFAULT_PRIOR,
) -> dict[str, Any]:
    """The conclusions of a project the caller already may read as a lead (the dataset card's path)."""
    if sample not in SAMPLES:
        raise ValueError(f"sample must be one of {', '.join(SAMPLES)}")
    check_cluster(cluster)
    check_prior(prior)
    criterion = _criterion_index(project, criterion_id)
    key = _cache_key(project, criterion_id, sample, cluster, prior)
    found = cache.get(key)
    if found is not None:
        return dict(found)
    figures = conclusions(_inputs(project, criterion, sample, cluster, prior))
    figures["sample"] = sample
    figures["criterion_id"] = criterion_id
    figures["cluster"] = cluster
    figures["prior"] = prior
    cache.set(key, figures, CACHE_SECONDS)
    return figures


def conclusions_get_for_lead(
    *,
    user: AnyUser,
    project_id: int,
    criterion_id: int | None = None,
    sample: Sample = "blind",
    cluster: str = "prompt",
    prior: float = DEFAULT_PRIOR,
) -> tuple[Project, dict[str, Any]]:
    """The project (404 unless the user leads it) and its conclusions."""
    project = project_get_for_lead(user=user, project_id=project_id)
    figures = conclusions_for_project(
        project=project, criterion_id=criterion_id, sample=sample, cluster=cluster, prior=prior
    )
    return project, figures
