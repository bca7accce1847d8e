"""Labels and aggregates written directly, so API and export tests do not depend on the aggregation engine's timing."""

from __future__ import annotations

from django.utils import timezone

from aggregation.models import ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.models import Annotation, AnnotationRevision, JudgmentValue, SuggestionExposure
from projects.models import Item, Project
from tests.factories import SuggestionFactory

BLIND_MARKER = "BLIND-SUGGESTION-MARKER-7f3a9c"
SHOWN_MARKER = "SHOWN-SUGGESTION-RATIONALE-2b8e"


def label_ifs(*, item: Item, annotator, values: list[tuple[int, int]], shown: bool = False) -> Annotation:
    """One IFS label: (μ, ν) per-mille per response position, single criterion."""
    criterion = item.project.criteria.get()
    annotation = Annotation.objects.create(
        project=item.project,
        item=item,
        annotator=annotator,
        mode=Project.Mode.IFS,
        response_order=[1, 0],
        suggestion_shown=shown,
        time_spent_ms=4200,
        revision_count=1,
    )
    for response, (mu, nu) in zip(item.responses.order_by("position"), values, strict=True):
        JudgmentValue.objects.create(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu)
    AnnotationRevision.objects.create(annotation=annotation, number=1, payload={"values": values})
    if shown:
        SuggestionExposure.objects.create(
            project=item.project, item=item, annotator=annotator, kind=SuggestionExposure.Kind.BEFORE_LABEL
        )
    Item.objects.filter(pk=item.pk).update(annotation_count=item.annotations.count())
    return annotation


def aggregate_item(
    *,
    item: Item,
    scores: list[tuple[float, float]],
    n_annotators: int = 2,
    hesitation: float = 0.2,
    agreement: float = 0.8,
    provenance: str = Provenance.HUMAN,
) -> ItemAggregate:
    """An ItemAggregate and overall ResponseAggregates under the project's operator from (μ, ν) per position."""
    project = item.project
    responses = list(item.responses.order_by("position"))
    for response, (mu, nu) in zip(responses, scores, strict=True):
        ResponseAggregate.objects.create(
            item=item, response=response, criterion=None, operator=project.aggregation_operator, mu=mu, nu=nu
        )
    s = [mu - nu for mu, nu in scores]
    best = max(range(len(s)), key=lambda i: s[i])
    worst = min(range(len(s)), key=lambda i: s[i])
    return ItemAggregate.objects.create(
        project=project,
        item=item,
        provenance=provenance,
        operator=project.aggregation_operator,
        best_position=best,
        worst_position=worst,
        p_best=0.5 + (s[best] - s[worst]) / 4,
        margin=s[best] - s[worst],
        hesitation=hesitation,
        agreement=agreement,
        signed_preference=(s[0] - s[1]) / 2,
        n_annotators=n_annotators,
        computed_at=timezone.now(),
    )


def figure(value: float, n: int, low: float, high: float) -> dict:
    return {"value": value, "n": n, "ci": [low, high]}


def build_labelled_project(project: Project, annotators: list) -> Project:
    """Suggestions on every item (blind ones carry BLIND_MARKER), two labels per item, aggregates, headline figures."""
    items = list(project.items.order_by("id"))
    if not any(item.is_blind for item in items):
        Item.objects.filter(pk=items[0].pk).update(is_blind=True)
        items[0].is_blind = True
    for index, item in enumerate(items):
        marker = BLIND_MARKER if item.is_blind else SHOWN_MARKER
        SuggestionFactory(
            item=item, rationale=f"{marker} rationale", model_name=f"{marker}-model", values=[(100, 800), (900, 50)]
        )
        for annotator in annotators:
            label_ifs(item=item, annotator=annotator, values=[(200 + index * 10, 600), (700, 100)])
        aggregate_item(item=item, scores=[(0.2 + index * 0.01, 0.6), (0.7, 0.1)], n_annotators=len(annotators))
    ProjectAggregate.objects.update_or_create(
        project=project,
        defaults={
            "agreement": {
                "pairwise_with_ties": {**figure(0.75, 6, 0.5, 0.9), "items": len(items)},
                "pairwise_without_ties": {**figure(0.8, 5, 0.55, 0.95), "items": len(items)},
                "alpha_nominal": {**figure(0.4, 12, 0.1, 0.6), "items": len(items)},
                "alpha_interval": {**figure(0.5, 12, 0.2, 0.7), "items": len(items)},
                "ifs": {**figure(0.85, 6, 0.8, 0.9), "items": len(items)},
            },
            "suggestions": {
                "blind": {"agreement": figure(0.6, 10, 0.31, 0.83)},
                "shown": {"agreement": figure(0.9, 20, 0.7, 0.97)},
                "anchoring_gap": figure(0.3, 30, 0.02, 0.55),
            },
            "progress": {"items_total": len(items), "items_done": 0},
            "computed_at": timezone.now(),
        },
    )
    return project
