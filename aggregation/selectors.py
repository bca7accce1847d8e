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
from django.db.models import Exists, OuterRef, Prefetch, QuerySet, Subquery
from django.http import Http404

from aggregation.maths import minimums
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.models import Annotation, JudgmentValue
from projects.models import TIE, Criterion, Item, Job, Membership, Project
from projects.selectors import item_get_for_user, project_get_for_lead

AnyUser = AbstractBaseUser | AnonymousUser

REVIEW_QUEUE_LENGTH = 10
# "Low hesitation but high disagreement" (the paper's sign of bias or unclear guidelines): annotators were sure of
# themselves and still disagreed. Fixed, documented cut-offs rather than project percentiles, which would need a
# scan of every item on each page view.
CONFIDENT_HESITATION_MAX = 0.25
DISAGREEMENT_AGREEMENT_BELOW = 0.75


STALE_NEW_LABELS = "new_labels"
STALE_SETTINGS = "settings_changed"
STALE_REASONS = {
    STALE_NEW_LABELS: "new labels: recomputing",
    # Gold bumps the settings version too (annotation.notes.services.item_gold_set), so the words name both.
    STALE_SETTINGS: "stale: recomputing after a change to the settings or gold",
}


@dataclass(frozen=True)
class Staleness:
    """Whether stored figures lag behind the labels or the settings, and why (keys of STALE_REASONS)."""

    reasons: tuple[str, ...] = ()
    newest_label_at: datetime | None = None

    @property
    def stale(self) -> bool:
        return bool(self.reasons)

    @property
    def settings_changed(self) -> bool:
        return STALE_SETTINGS in self.reasons

    @property
    def new_labels(self) -> bool:
        return STALE_NEW_LABELS in self.reasons

    @property
    def reason_settings(self) -> str:
        """The settings badge's words (one text with the API's and the export header's)."""
        return STALE_REASONS[STALE_SETTINGS]

    @property
    def reason(self) -> str | None:
        """In words, for a badge, the stats API and the export header; None when fresh."""
        return "; ".join(STALE_REASONS[r] for r in self.reasons) or None


_UNKNOWN: Any = object()


def figures_staleness(
    *, project: Project, aggregate: ProjectAggregate | None = _UNKNOWN, newest_label_at: datetime | None = _UNKNOWN
) -> Staleness:
    """The one answer to "is this figure stale", for the dashboard, the stats API and the exports.

    Rules:
    - ``new_labels``: a label was saved or edited after the project figures were computed (the newest annotation's
      ``updated_at`` is later than ``ProjectAggregate.source_updated_at``, or labels exist and no figures yet). A
      whole project run stamps ``source_updated_at`` (and ``settings_version``) last, after the weights, the item
      aggregates (stale ones redone), agreement, suggestion, handoff and labelling figures have all counted the labels
      up to it (aggregation.services.project_aggregates_recompute): no block of the answer lags a fresh stamp.
    - ``settings_changed``: ``Project.settings_version`` (bumped by projects.services on every figure-relevant
      setting) is higher than the version the project figures, their suggestion / handoff part, any annotator
      weight or any human item aggregate were computed with. ``model_handoff`` item aggregates are not counted:
      they come from the LLM's suggestion, not from the settings-dependent maths.
    A project without labels and without figures is never stale. Callers that already hold the aggregate or the
    newest label time pass them; the rest is one query (the newest label through the (project, updated_at) index
    and two indexed EXISTS).
    """
    if aggregate is _UNKNOWN:
        aggregate = ProjectAggregate.objects.filter(project=project).first()
    version = project.settings_version
    newest = Annotation.objects.filter(project_id=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    found = (
        Project.objects.filter(pk=project.pk)
        .annotate(
            newest=Subquery(newest),
            annotators_behind=Exists(
                AnnotatorAggregate.objects.filter(project_id=OuterRef("pk"), settings_version__lt=version)
            ),
            items_behind=Exists(
                ItemAggregate.objects.filter(
                    project_id=OuterRef("pk"), provenance=Provenance.HUMAN, settings_version__lt=version
                )
            ),
        )
        .values("newest", "annotators_behind", "items_behind")
        .first()
    ) or {"newest": None, "annotators_behind": False, "items_behind": False}
    if newest_label_at is _UNKNOWN:
        newest_label_at = found["newest"]
    reasons: list[str] = []
    if newest_label_at is not None:
        seen = aggregate.source_updated_at if aggregate else None
        if seen is None or newest_label_at > seen:
            reasons.append(STALE_NEW_LABELS)
    if (
        (aggregate is not None and min(aggregate.settings_version, aggregate.suggestions_settings_version) < version)
        or found["annotators_behind"]
        or found["items_behind"]
    ):
        reasons.append(STALE_SETTINGS)
    return Staleness(reasons=tuple(reasons), newest_label_at=newest_label_at)


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
    staleness: Staleness = Staleness()

    @property
    def stale(self) -> bool:
        """Labels or a settings change arrived after the figures were computed (figures_staleness)."""
        return self.staleness.stale

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
    # Responses come along so the list can name the preferred one the way the review page and exports do.
    base = ItemAggregate.objects.filter(project=project).select_related("item").prefetch_related("item__responses")
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
    annotator_aggregates = annotator_figures_withheld(
        list(AnnotatorAggregate.objects.filter(project=project).select_related("annotator").order_by("-weight", "id")),
        agreement=aggregate.agreement if aggregate else None,
    )
    staleness = figures_staleness(project=project, aggregate=aggregate)
    return Dashboard(
        project=project,
        aggregate=aggregate,
        criteria=list(project.criteria.all()),
        members=members,
        annotator_aggregates=annotator_aggregates,
        has_items=Item.objects.filter(project=project).exists(),
        review=review_queue_get(project=project),
        newest_label_at=staleness.newest_label_at,
        staleness=staleness,
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


def response_name(*, position: int | None, model: str | None = "") -> str:
    """A response's stable name for leads: "Response 1 (gpt-4o)" for stored position 0 with its model.

    Stable because it comes from the stored position (the exports' ``position``, 0-based) and model, never from the
    order an annotator happened to see; 1-based because people count that way. The review page, the dashboard and
    the export page all name responses through this.
    """
    if position is None:
        return "—"
    if int(position) == TIE:
        return "tie"
    return f"Response {int(position) + 1}" + (f" ({model})" if model else "")


EXPORT_JOBS_LISTED = 5


def export_jobs_recent(*, project: Project, limit: int = EXPORT_JOBS_LISTED) -> list[Job]:
    """The project's latest export jobs, newest first (the caller has already checked the lead)."""
    return list(Job.objects.filter(project=project, kind=Job.Kind.EXPORT).order_by("-created_at", "-id")[:limit])


def export_job_get(*, user: AnyUser, project_id: int, job_id: int) -> tuple[Project, Job]:
    """One export job of a project the user leads; anyone else, or another project's job, gets Http404."""
    project = project_get_for_lead(user=user, project_id=project_id)
    job = Job.objects.filter(pk=job_id, project=project, kind=Job.Kind.EXPORT).first()
    if job is None:
        raise Http404("No such export.")
    return project, job


# --- what the REST API lists (leads only) -------------------------------------------------------------------------


def project_aggregate_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, ProjectAggregate | None]:
    """The project a lead reads figures of, with its stored project figures (None before the first run)."""
    project = project_get_for_lead(user=user, project_id=project_id)
    return project, ProjectAggregate.objects.filter(project=project).first()


def item_aggregates_for_lead(
    *, user: AnyUser, project_id: int, provenance: str | None = None
) -> QuerySet[ItemAggregate]:
    """The project's item aggregates with their items, of one provenance when given (unknown ones are ignored)."""
    project = project_get_for_lead(user=user, project_id=project_id)
    rows = ItemAggregate.objects.filter(project=project).select_related("item")
    if provenance in Provenance.values:
        rows = rows.filter(provenance=provenance)
    return rows


def annotator_figures_withheld(rows: list[AnnotatorAggregate], *, agreement: Any) -> list[AnnotatorAggregate]:
    """The rows with ``weight_reason`` set, and the weight and the parts that compare annotators (agreement,
    consensus weight) set to None in memory, where the data cannot support them yet (aggregation.maths.minimums).
    Nothing is saved: the next recompute's rows are read the same way."""
    stored = _as_dict(agreement).get("pairwise_with_ties")
    overlap = minimums.overlap_items_of(stored if isinstance(stored, dict) else None)
    for row in rows:
        row.expertise_reason = minimums.expertise_needs(row.expertise_n)  # type: ignore[attr-defined]
        if row.expertise_reason is not None:  # type: ignore[attr-defined]
            row.expertise = None
        reason = minimums.weight_needs(row.n_labels, overlap, len(rows))
        row.weight_reason = reason  # type: ignore[attr-defined]
        if reason is not None:
            row.weight = None  # type: ignore[assignment]
            row.agreement = None
            row.consensus_weight = None
    return rows


def annotator_aggregates_for_lead(*, user: AnyUser, project_id: int) -> list[AnnotatorAggregate]:
    """The project's annotators' figures, heaviest weight first, with what the data cannot support withheld."""
    project = project_get_for_lead(user=user, project_id=project_id)
    aggregate = ProjectAggregate.objects.filter(project=project).only("agreement").first()
    return annotator_figures_withheld(
        list(AnnotatorAggregate.objects.filter(project=project).select_related("annotator").order_by("-weight")),
        agreement=aggregate.agreement if aggregate else None,
    )
