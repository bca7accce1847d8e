"""Stored aggregates written directly, as the aggregation tasks would leave them: the dashboard only reads these."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.utils import timezone

from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate
from projects.models import Item, Project


def estimate(value: float, n: int = 30) -> dict[str, Any]:
    # "items": the overlap it was computed on, above the minimum (aggregation.maths.minimums) so it is shown.
    return {"value": value, "n": n, "ci": [value - 0.05, value + 0.05], "items": 10}


def project_aggregate_create(*, project: Project, users: Sequence[Any] = ()) -> ProjectAggregate:
    now = timezone.now()
    n_items = Item.objects.filter(project=project).count()
    return ProjectAggregate.objects.create(
        project=project,
        agreement={
            "pairwise_with_ties": estimate(0.71),
            "pairwise_without_ties": estimate(0.78),
            "alpha_interval": estimate(0.54),
            "alpha_nominal": estimate(0.47),
            "ifs": estimate(0.82),
        },
        plots={
            "hesitation": {
                "bins": [0.0, 0.25, 0.5, 0.75, 1.0],
                "criteria": [
                    {"criterion_id": c.pk, "name": c.name, "counts": [4, 8, 2, 1], "n": 15}
                    for c in project.criteria.all()
                ],
            },
            "agreement_over_time": [
                {
                    "date": "2026-11-01",
                    "n_labels": 10,
                    "overlap_items": 5,
                    "pairwise_with_ties": 0.6,
                    "alpha_interval": 0.4,
                    "ifs": 0.7,
                },
                {
                    "date": "2026-11-02",
                    "n_labels": 20,
                    "overlap_items": 10,
                    "pairwise_with_ties": 0.7,
                    "alpha_interval": 0.5,
                    "ifs": 0.8,
                },
            ],
            "weights": [],
        },
        progress={
            "items_total": n_items,
            "items_done": n_items // 2,
            "labels_needed": n_items * 3,
            "labels_done": n_items,
            "annotators": [
                {"annotator_id": u.pk, "username": u.get_username(), "labels": 7 + i, "skipped": 0}
                for i, u in enumerate(users)
            ],
        },
        computed_at=now,
        agreement_computed_at=now,
    )


def item_aggregates_create(
    *, project: Project, figures: Sequence[tuple[float | None, float | None]] | None = None
) -> list[ItemAggregate]:
    """One aggregate per item; ``figures`` gives (hesitation, agreement) per item in id order."""
    items = list(Item.objects.filter(project=project).order_by("id"))
    figures = figures or [(0.1 + 0.5 * (i % 2), 0.9 - 0.1 * (i % 5)) for i in range(len(items))]
    now = timezone.now()
    return ItemAggregate.objects.bulk_create(
        [
            ItemAggregate(
                project=project,
                item=item,
                operator=project.aggregation_operator,
                best_position=0,
                worst_position=1,
                p_best=0.6,
                margin=0.4,
                hesitation=hesitation,
                agreement=agreement,
                signed_preference=0.2,
                n_annotators=3,
                computed_at=now,
            )
            for item, (hesitation, agreement) in zip(items, figures, strict=True)
        ]
    )


def annotator_aggregates_create(*, project: Project, users: Sequence[Any]) -> list[AnnotatorAggregate]:
    now = timezone.now()
    return AnnotatorAggregate.objects.bulk_create(
        [
            AnnotatorAggregate(
                project=project,
                annotator=user,
                weight=0.5 - 0.1 * i,
                consistency=0.8,
                expertise=0.7,
                expertise_n=8,
                agreement=0.6,
                n_labels=12,
                median_time_ms=15_500,
                blind_agreement=0.75,
                blind_n=8,
                computed_at=now,
            )
            for i, user in enumerate(users)
        ]
    )


@pytest.fixture
def computed_project(project, annotator, annotator2) -> Project:
    """The conftest project (6 items, 2 annotators) with every aggregate stored and labelling started."""
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=[annotator, annotator2])
    project_aggregate_create(project=project, users=[annotator, annotator2])
    return project


@pytest.fixture
def dashboard_url() -> Callable[[Project], str]:
    from django.urls import reverse

    return lambda project: reverse("dashboard", kwargs={"project_id": project.pk})
