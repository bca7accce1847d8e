"""Reads for the lead's dashboard and review pages. Lead only: everyone else gets Http404.

Every figure comes from the stored aggregates (written by background tasks), so the number of queries and the work
per page stay the same however many items a project holds. The two review lists read ItemAggregate through its
(project, hesitation) index with ORDER BY … LIMIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch

from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, ResponseAggregate
from annotation.models import Annotation, JudgmentValue
from projects.models import Criterion, Item, Membership, Project
from projects.selectors import item_get_for_user, project_get_for_lead

AnyUser = AbstractBaseUser | AnonymousUser

REVIEW_QUEUE_LENGTH = 10
# "Low hesitation but high disagreement" (the paper's sign of bias or unclear guidelines): annotators were sure of
# themselves and still disagreed. Fixed, documented cut-offs rather than project percentiles, which would need a
# scan of every item on each page view.
CONFIDENT_HESITATION_MAX = 0.25
DISAGREEMENT_AGREEMENT_BELOW = 0.75


@dataclass(frozen=True)
class ReviewQueue:
    high_hesitation: list[ItemAggregate]
    confident_disagreement: list[ItemAggregate]
    confident_hesitation_max: float = CONFIDENT_HESITATION_MAX
    disagreement_agreement_below: float = DISAGREEMENT_AGREEMENT_BELOW


@dataclass(frozen=True)
class Dashboard:
    project: Project
    aggregate: ProjectAggregate | None
    criteria: list[Criterion]
    members: list[Membership]
    annotator_aggregates: list[AnnotatorAggregate]
    has_items: bool
    review: ReviewQueue
    newest_label_at: datetime | None = None

    @property
    def stale(self) -> bool:
        """Labels arrived after the figures were computed: the background recomputation has not caught up yet."""
        if self.newest_label_at is None:
            return False
        seen = self.aggregate.source_updated_at if self.aggregate else None
        return seen is None or self.newest_label_at > seen

    @property
    def agreement(self) -> dict[str, Any]:
        return _as_dict(self.aggregate.agreement if self.aggregate else None)

    @property
    def suggestions(self) -> dict[str, Any]:
        return _as_dict(self.aggregate.suggestions if self.aggregate else None)

    @property
    def plots(self) -> dict[str, Any]:
        return _as_dict(self.aggregate.plots if self.aggregate else None)

    @property
    def progress(self) -> dict[str, Any]:
        return _as_dict(self.aggregate.progress if self.aggregate else None)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def review_queue_get(*, project: Project, limit: int = REVIEW_QUEUE_LENGTH) -> ReviewQueue:
    """Items a lead should look at: the most hesitant, and the confident ones on which annotators still disagree."""
    base = ItemAggregate.objects.filter(project=project).select_related("item")
    high_hesitation = list(base.filter(hesitation__isnull=False).order_by("-hesitation", "-id")[:limit])
    confident_disagreement = list(
        base.filter(
            hesitation__lte=CONFIDENT_HESITATION_MAX,
            agreement__lt=DISAGREEMENT_AGREEMENT_BELOW,
            n_annotators__gte=2,
        ).order_by("agreement", "id")[:limit]
    )
    return ReviewQueue(high_hesitation=high_hesitation, confident_disagreement=confident_disagreement)


def dashboard_get(*, user: AnyUser, project_id: int) -> Dashboard:
    """Everything the dashboard shows, in a fixed number of queries."""
    project = project_get_for_lead(user=user, project_id=project_id)
    aggregate = ProjectAggregate.objects.filter(project=project).first()
    members = list(Membership.objects.filter(project=project).select_related("user").order_by("role", "user__username"))
    annotator_aggregates = list(
        AnnotatorAggregate.objects.filter(project=project).select_related("annotator").order_by("-weight", "id")
    )
    return Dashboard(
        project=project,
        aggregate=aggregate,
        criteria=list(project.criteria.all()),
        members=members,
        annotator_aggregates=annotator_aggregates,
        has_items=Item.objects.filter(project=project).exists(),
        review=review_queue_get(project=project),
        # One row through the (project, updated_at) index, however many labels there are.
        newest_label_at=Annotation.objects.filter(project=project)
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
        .first(),
    )


def settings_get(*, user: AnyUser, project_id: int) -> tuple[Project, list[Criterion], list[Membership]]:
    project = project_get_for_lead(user=user, project_id=project_id)
    members = list(Membership.objects.filter(project=project).select_related("user").order_by("role", "user__username"))
    return project, list(project.criteria.all()), members


@dataclass(frozen=True)
class ItemReview:
    project: Project
    item: Item
    criteria: list[Criterion]
    annotations: list[Annotation]
    aggregate: ItemAggregate | None
    response_aggregates: list[ResponseAggregate]


def item_review_get(*, user: AnyUser, project_id: int, item_id: int) -> ItemReview:
    """One item with every annotator's labels and its aggregate, for a lead."""
    project = project_get_for_lead(user=user, project_id=project_id)
    item = item_get_for_user(user=user, project=project, item_id=item_id)
    item = Item.objects.filter(pk=item.pk).select_related("suggestion").prefetch_related("responses").get()
    annotations = list(
        Annotation.objects.filter(item=item)
        .select_related("annotator")
        .prefetch_related(Prefetch("values", queryset=JudgmentValue.objects.select_related("response", "criterion")))
        .order_by("annotator__username")
    )
    response_aggregates = list(
        ResponseAggregate.objects.filter(item=item, operator=project.aggregation_operator)
        .select_related("response", "criterion")
        .order_by("response__position", "criterion__position")
    )
    return ItemReview(
        project=project,
        item=item,
        criteria=list(project.criteria.all()),
        annotations=annotations,
        aggregate=ItemAggregate.objects.filter(item=item).first(),
        response_aggregates=response_aggregates,
    )
