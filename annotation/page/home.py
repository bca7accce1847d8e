"""Reads for the annotator's home and the page's progress line: their own counts per project, in a fixed number
of queries however many projects and items."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Least

from annotation.models import Annotation, Assignment
from config import compiled_sql
from projects.models import Item, Membership, Project

AnyUser = AbstractBaseUser | AnonymousUser


@dataclass
class HomeRow:
    project: Project
    role: str
    done: int = 0
    skipped: int = 0
    open_for_you: int = 0
    items: int = 0
    filled: int = 0

    @property
    def is_lead(self) -> bool:
        return self.role == Membership.Role.LEAD

    @property
    def is_annotator(self) -> bool:
        return self.role == Membership.Role.ANNOTATOR

    @property
    def paused(self) -> bool:
        """Labelling stopped (handed off to the LLM or closed): the queue serves nothing, whatever is short."""
        return self.project.phase != Project.Phase.COLLECTING

    @property
    def project_percent(self) -> int:
        wanted = self.items * self.project.overlap
        return round(100 * self.filled / wanted) if wanted else 0


def home_rows_for_user(*, user: AnyUser) -> list[HomeRow]:
    """The user's projects with their own progress, in four queries however many projects and items."""
    if not user.is_authenticated:
        return []
    memberships = Membership.objects.filter(user_id=user.pk).select_related("project").order_by("project__name")
    rows = {m.project_id: HomeRow(project=m.project, role=m.role) for m in memberships}
    if not rows:
        return []
    ids = list(rows)
    for done_entry in (
        Annotation.objects.filter(annotator_id=user.pk, project_id__in=ids).values("project_id").annotate(n=Count("id"))
    ):
        rows[done_entry["project_id"]].done = done_entry["n"]
    for item_entry in (
        Item.objects.filter(project_id__in=ids)
        .values("project_id")
        .annotate(
            total=Count("id"),
            open=Count("id", filter=Q(annotation_count__lt=F("project__overlap") + F("extra_labels"))),
            # Labels collected so far, each item counted up to the overlap wanted.
            filled=Sum(Least("annotation_count", "project__overlap", output_field=IntegerField())),
        )
    ):
        rows[item_entry["project_id"]].items = item_entry["total"]
        rows[item_entry["project_id"]].open_for_you = item_entry["open"]
        rows[item_entry["project_id"]].filled = item_entry["filled"] or 0
    # Items still open that this user already labelled or skipped are not open for them.
    for history_entry in (
        Assignment.objects.filter(
            annotator_id=user.pk,
            project_id__in=ids,
            status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED],
        )
        .values("project_id")
        .annotate(
            skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
            still_open=Count(
                "id", filter=Q(item__annotation_count__lt=F("project__overlap") + F("item__extra_labels"))
            ),
        )
    ):
        row = rows[history_entry["project_id"]]
        row.skipped = history_entry["skipped"]
        row.open_for_you = max(0, row.open_for_you - history_entry["still_open"])
    for row in rows.values():
        if row.paused:
            row.open_for_you = 0  # the queue only serves collecting projects: nothing is open for anyone
    return list(rows.values())


@dataclass
class QueueProgress:
    done: int
    skipped: int
    total: int = 0

    @property
    def current(self) -> int:
        """The number of the item in hand: the next after those already labelled or skipped."""
        return min(self.done + self.skipped + 1, max(self.total, 1))

    @property
    def first_visit(self) -> bool:
        """Nothing labelled or skipped in this project yet: the page opens the guidelines."""
        return self.done == 0 and self.skipped == 0


def _progress_counts(values: Mapping[str, Any]) -> QuerySet[Project]:
    """The project row with three counts, each an index lookup: its items (the project_id index), and this
    annotator's done and skipped assignments (assignment_history_idx). Joining items to assignments instead reads
    every item of the project on every page."""

    def counted(rows: QuerySet[Any]) -> Subquery:
        return Subquery(rows.order_by().values("project_id").annotate(n=Count("pk")).values("n")[:1])

    own = Assignment.objects.filter(project_id=OuterRef("pk"), annotator_id=values["annotator_id"])
    return (
        Project.objects.filter(pk=values["project_id"])
        .annotate(
            items_total=counted(Item.objects.filter(project_id=OuterRef("pk"))),
            own_done=counted(own.filter(status=Assignment.Status.DONE)),
            own_skipped=counted(own.filter(status=Assignment.Status.SKIPPED)),
        )
        .only("pk")
    )


def home_progress_for(*, project: Project, annotator: AnyUser) -> QueueProgress:
    """This annotator's own counts in one project and the project's item count, in one statement (the page's
    save-and-next has a statement budget), compiled once per process on PostgreSQL."""
    named: dict[str, Any] = {"project_id": project.pk, "annotator_id": annotator.pk}
    row: Any  # a Project with the three counts as attributes
    if compiled_sql.enabled() and annotator.pk is not None:
        row = compiled_sql.first_row(Project, ("progress counts",), _progress_counts, named)
    else:
        row = _progress_counts(named).first()
    if row is None:
        return QueueProgress(done=0, skipped=0, total=0)
    return QueueProgress(done=row.own_done or 0, skipped=row.own_skipped or 0, total=row.items_total or 0)
