"""Reads of a method study: which item and which method come next for an annotator, and the design for leads.

The annotator's queue and page reach the study through two functions only: :func:`design_next_item` (the claim
asks it which item is next) and :func:`project_as_assigned` (the page, its form and the save ask it which method
the item is judged with). Both cost nothing for a project that is not in crossover mode.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, OuterRef, Subquery

from annotation.method_study import design as crossover_design
from annotation.method_study.models import MethodStudy, StudyCell
from annotation.models import Annotation, Assignment
from annotation.selectors import repeat_open_for
from projects.models import Item, Membership, Project
from projects.selectors import project_get_for_lead

AnyUser = AbstractBaseUser | AnonymousUser

METHOD_NAMES = {
    Project.Mode.IFS: "IFS sliders",
    Project.Mode.BINARY: "Binary choice",
    Project.Mode.LIKERT: "Likert scale",
}


def method_label(method: str, likert_points: int) -> str:
    if method == Project.Mode.LIKERT:
        return f"Likert scale ({likert_points} points)"
    return METHOD_NAMES.get(method, method)  # type: ignore[call-overload]


def cell_for(*, project: Project, item: Item, annotator_id: int) -> StudyCell | None:
    return (
        StudyCell.objects.filter(study__project_id=project.pk, item_id=item.pk, annotator_id=annotator_id)
        .select_related("study")
        .first()
    )


def project_as_assigned(*, project: Project, item: Item, annotator: AnyUser) -> Project:
    """The project as this annotator judges this item: in a crossover study, a copy whose ``mode`` is the method of
    the design's block for (annotator, item); any other project unchanged (no query).

    The copy is for reading only (the page, its form, the save's checks and the annotation's stored mode); it is
    never saved. An item outside the annotator's share of the design is refused: a label with no planned method
    would enter the comparison under no method.
    """
    if project.mode != Project.Mode.CROSSOVER:
        return project
    cell = cell_for(project=project, item=item, annotator_id=int(annotator.pk or 0))
    if cell is None:
        raise ValidationError({"__all__": "This item is not in your part of the method study."})
    assigned = copy.copy(project)
    assigned.mode = cell.method
    return assigned


def design_next_item(*, project: Project, annotator_id: int, exclude_item_ids: Sequence[int] = ()) -> int | None:
    """The item of this annotator's first planned judgment that they have neither saved nor skipped; None when
    their share is done. The design fixes the order: blocks in the Williams order, items in their seeded order."""
    finished = Assignment.objects.filter(
        item=OuterRef("item_id"),
        annotator_id=annotator_id,
        status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED],
    )
    return (
        StudyCell.objects.filter(study__project_id=project.pk, annotator_id=annotator_id)
        .exclude(item_id__in=exclude_item_ids)
        .filter(~Exists(finished))
        .order_by("sequence")
        .values_list("item_id", flat=True)
        .first()
    )


@dataclass(frozen=True)
class BlockBanner:
    """What the annotator's page says about the current block (never which items are in other blocks)."""

    method: str
    block: int  # 1-based
    blocks: int
    position: int  # 1-based place in the block
    block_length: int
    planned: int  # the annotator's whole share, every block


def block_banner(*, project: Project, item: Item, annotator: AnyUser) -> BlockBanner | None:
    if project.mode != Project.Mode.CROSSOVER:
        return None
    cell = cell_for(project=project, item=item, annotator_id=int(annotator.pk or 0))
    if cell is None:
        return None
    mine = list(
        StudyCell.objects.filter(study_id=cell.study_id, annotator_id=cell.annotator_id)
        .order_by("sequence")
        .values_list("block", "sequence", "item_id")
    )
    here = cell.block, cell.sequence
    if repeat_open_for(project=project, item=item, annotator=annotator) is not None:
        # An unannounced repeat keeps its original method (the form is that method's) but shows the person's
        # current place in the plan: the original's earlier place would give the repeat away.
        upcoming = design_next_item(project=project, annotator_id=cell.annotator_id)
        here = next(((b, s) for b, s, i in mine if i == upcoming), (mine[-1][0], mine[-1][1]))
    block_cells = [sequence for block, sequence, _ in mine if block == here[0]]
    return BlockBanner(
        method=method_label(cell.method, project.likert_points),
        block=here[0] + 1,
        blocks=len(cell.study.methods),
        position=block_cells.index(here[1]) + 1,
        block_length=len(block_cells),
        planned=len(mine),
    )


# --- leads --------------------------------------------------------------------------------------------------------


def method_study_get_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, MethodStudy | None]:
    """The project (lead only; others get 404) and its study, if one is set up."""
    project = project_get_for_lead(user=user, project_id=project_id)
    return project, MethodStudy.objects.filter(project=project).first()


DESIGN_COLUMNS = (
    "annotator_id",
    "annotator",
    "williams_row",
    "block",
    "sequence",
    "method",
    "item_id",
    "external_id",
    "status",
    "saved_at",
    "time_spent_ms",
)


def design_rows(*, study: MethodStudy, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
    """The whole design with what became of each planned judgment, for the audit export (streamed in batches)."""
    labels = Annotation.objects.filter(item_id=OuterRef("item_id"), annotator_id=OuterRef("annotator_id"))
    skipped = Assignment.objects.filter(
        item_id=OuterRef("item_id"), annotator_id=OuterRef("annotator_id"), status=Assignment.Status.SKIPPED
    )
    rows = (
        StudyCell.objects.filter(study=study)
        .annotate(
            saved_at=Subquery(labels.values("created_at")[:1]),
            time_spent_ms=Subquery(labels.values("time_spent_ms")[:1]),
            was_skipped=Exists(skipped),
        )
        .values(
            "annotator_id",
            "annotator__username",
            "order_row",
            "block",
            "sequence",
            "method",
            "item_id",
            "item__external_id",
            "saved_at",
            "time_spent_ms",
            "was_skipped",
        )
        .order_by("annotator_id", "sequence")
    )
    for row in rows.iterator(chunk_size=batch_size):
        saved = row["saved_at"] is not None
        yield {
            "annotator_id": row["annotator_id"],
            "annotator": row["annotator__username"],
            "williams_row": row["order_row"],
            "block": row["block"] + 1,
            "sequence": row["sequence"] + 1,
            "method": row["method"],
            "item_id": row["item_id"],
            "external_id": row["item__external_id"],
            "status": "saved" if saved else "skipped" if row["was_skipped"] else "open",
            "saved_at": row["saved_at"].isoformat() if saved else "",
            "time_spent_ms": row["time_spent_ms"] if saved else "",
        }


def design_summary(*, study: MethodStudy) -> dict[str, Any]:
    """Counts for the setup page: annotators, items, planned and saved judgments per method."""
    cells = StudyCell.objects.filter(study=study)
    annotator_ids = set(cells.values_list("annotator_id", flat=True).distinct())
    per_method = {method: cells.filter(method=method).count() for method in study.methods}
    done = Annotation.objects.filter(
        project_id=study.project_id, annotator_id__in=annotator_ids, mode__in=study.methods
    ).count()
    n_items = cells.values("item_id").distinct().count()
    return {
        "annotators": len(annotator_ids),
        "items": n_items,
        "planned": sum(per_method.values()),
        "planned_per_method": per_method,
        "saved": done,
        "shortfall": crossover_design.agreement_shortfall(
            n_methods=len(study.methods), n_annotators=len(annotator_ids), n_items=n_items, block_size=study.block_size
        ),
    }


def study_agreement_shortfall(*, study: MethodStudy) -> str | None:
    """Which figures the study's design cannot give and what to change (None when it gives them all): one query."""
    counts = StudyCell.objects.filter(study=study).aggregate(
        annotators=Count("annotator_id", distinct=True), items=Count("item_id", distinct=True)
    )
    return crossover_design.agreement_shortfall(
        n_methods=len(study.methods),
        n_annotators=counts["annotators"],
        n_items=counts["items"],
        block_size=study.block_size,
    )


@dataclass(frozen=True)
class SetupChoices:
    """What the lead's setup form offers: the project's annotators and items."""

    annotators: list[tuple[int, str]]
    item_count: int
    item_ids: list[int]


def study_setup_choices(*, project: Project) -> SetupChoices:
    annotators = list(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR)
        .order_by("user__username")
        .values_list("user_id", "user__username")
    )
    item_ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    return SetupChoices(annotators=annotators, item_count=len(item_ids), item_ids=item_ids)


def item_ids_by_external(*, project: Project, external_ids: Sequence[str]) -> tuple[list[int], list[str]]:
    """Item ids for these external ids, and the external ids not found in the project."""
    found = dict(
        Item.objects.filter(project=project, external_id__in=list(external_ids)).values_list("external_id", "pk")
    )
    return [found[e] for e in external_ids if e in found], [e for e in external_ids if e not in found]
