"""Writes of the annotator's work: saves (with revisions), skips and suggestion exposures.

Independent of HTTP: the page and the REST API call the same functions. Every function validates everything first
(annotation.checks) and writes nothing when it refuses, raising ValidationError with field-level messages. The save's
steps (check → plan → write) are in annotation.saving; what comes next is decided by
annotation.queue.services.next_item_decide, the one place for every caller.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import saving
from annotation.checks import (
    check_annotator_of,
    check_served,
    check_skip_reason,
    whole_number,
)
from annotation.claims import assignment_new
from annotation.models import Annotation, Assignment, SuggestionExposure
from annotation.queue.services import (
    lock_rows,
    next_item_decide,
)
from annotation.saving import SaveRequest, clamp_time
from annotation.selectors import PURPOSE_ACCEPT, PURPOSE_PAGE, PURPOSE_RESOLUTION, suggestion_visible_for
from config import events
from projects.models import Item, Project, Suggestion
from projects.services import project_mark_labelling_started


@transaction.atomic(durable=True)
def annotation_save(*, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest) -> Annotation:
    """Save this annotator's judgment of ``item`` and append a revision, in a transaction of its own; return the
    annotation. Needs a live claim, an existing annotation to edit, an open label request or room left on the item;
    a refused save raises ValidationError and writes nothing. The same ``client_token`` twice returns the annotation
    unchanged. On the person's request turn the save puts their next label request in their queue
    (``next_item_decide``, rule 1)."""
    return _save(project=project, item=item, annotator=annotator, save=save, claim_next=False)[0]


@transaction.atomic(durable=True)
def annotation_save_and_claim_next(
    *, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest, claim_next: bool
) -> tuple[Annotation, Assignment | None]:
    """:func:`annotation_save`, then (with ``claim_next``) the item ``next_item_decide`` gives, in one transaction:
    one BEGIN and one COMMIT for the page's save-and-next. A refused save claims nothing (the block rolls back whole).
    """
    return _save(project=project, item=item, annotator=annotator, save=save, claim_next=claim_next)


def _save(
    *, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest, claim_next: bool
) -> tuple[Annotation, Assignment | None]:
    """check → lock → plan → write (annotation.saving), then the next decision, inside the caller's transaction."""
    checked = saving.save_check(project=project, item=item, annotator=annotator, save=save)
    now = timezone.now()
    locked = saving.save_lock(project=checked.project, item=item, annotator=annotator, now=now)
    if locked.annotation is not None and saving.save_repeated(locked=locked, checked=checked):
        following = next_item_decide(project=project, annotator=annotator) if claim_next else None
        return locked.annotation, following
    plan = saving.save_plan(item=item, annotator=annotator, save=save, checked=checked, locked=locked, now=now)
    annotation = saving.save_write(plan=plan, item=item, annotator=annotator)
    if plan.first and checked.project.labelling_started_at is None:
        project_mark_labelling_started(project_id=project.pk)
    events.labels_changed(project_id=project.pk, item_ids=[item.pk])
    following = next_item_decide(
        project=project, annotator=annotator, after_save=plan.after_save(item), claim=claim_next
    )
    return annotation, following


@transaction.atomic
def assignment_skip(*, project: Project, item: Item, annotator: AbstractBaseUser, reason: str) -> Assignment:
    """Skip an item with a reason; it is not offered to this annotator again and frees the slot for others."""
    check_annotator_of(project=project, item=item, annotator=annotator)
    check_served(project=project, item_id=item.pk, annotator_id=int(annotator.pk))
    reason = check_skip_reason(reason)
    own = Assignment.objects.filter(item=item, annotator_id=annotator.pk)
    assignment = lock_rows(own, skip_locked=False).first()
    if assignment is None:
        # Opened by its address (a GET claims nothing): the item row serialises a double click, then look again.
        lock_rows(Item.objects.filter(pk=item.pk), skip_locked=False).values("pk").first()
        assignment = lock_rows(own.all(), skip_locked=False).first()
    if Annotation.objects.filter(item=item, annotator_id=annotator.pk).exists():
        raise ValidationError({"__all__": "You already labelled this item; change your label instead of skipping."})
    now = timezone.now()
    if assignment is None:
        # Skipping takes no slot: the row only records the skip (and the order the item was shown in).
        assignment = assignment_new(project=project, item=item, annotator=annotator, now=now)
    assignment.status = Assignment.Status.SKIPPED
    assignment.skip_reason = reason
    assignment.expires_at = now
    assignment.save(update_fields=["status", "skip_reason", "expires_at", "updated_at"])
    return assignment


_PURPOSE_OF_KIND: dict[str, str] = {
    SuggestionExposure.Kind.BEFORE_LABEL: PURPOSE_PAGE,
    SuggestionExposure.Kind.ACCEPT: PURPOSE_ACCEPT,
    SuggestionExposure.Kind.RESOLUTION: PURPOSE_RESOLUTION,
}


# Not atomic on purpose: reads, then one INSERT that commits by itself; a transaction around it would only add a
# BEGIN and a COMMIT to every page view.
def exposure_record(
    *,
    project: Project,
    item: Item,
    annotator: AbstractBaseUser,
    kind: str,
    visible: Suggestion | None = None,
    time_on_item_ms: Any = None,
) -> SuggestionExposure:
    """Record that the suggestion of ``item`` was shown to ``annotator``; refused where it may not be shown.

    ``visible``: the suggestion that ``suggestion_visible_for`` has just returned for this item, annotator and the
    kind's purpose in the same request (the page's render), so the decision is not read twice.
    ``time_on_item_ms``: for Accept, the page's visible clock at the click (clamped like a save's time).
    """
    if kind not in _PURPOSE_OF_KIND:
        raise ValidationError({"kind": f"Expected one of {', '.join(SuggestionExposure.Kind.values)}."})
    check_annotator_of(project=project, item=item, annotator=annotator)
    if visible is None or visible.item_id != item.pk:
        visible = suggestion_visible_for(
            project=project, item=item, annotator=annotator, purpose=_PURPOSE_OF_KIND[kind], with_values=False
        )
    if visible is None:
        raise ValidationError({"suggestion": "There is no suggestion to show for this item."})
    clock = None  # no reading (no script, or not a number): unknown, never 0 ms
    if kind == SuggestionExposure.Kind.ACCEPT and whole_number(time_on_item_ms) is not None:
        held = Assignment.objects.filter(item=item, annotator_id=annotator.pk).first()
        claimed_at = held.claimed_at if held is not None and held.status == Assignment.Status.CLAIMED else None
        clock = clamp_time(time_spent_ms=time_on_item_ms, claimed_at=claimed_at, now=timezone.now())
    return SuggestionExposure.objects.create(
        project=project, item=item, annotator_id=annotator.pk, kind=kind, time_on_item_ms=clock
    )
