"""A claim of one item for one annotator: the Assignment row with the response order drawn for them (seeded, so the
same annotator sees the same order whenever the item comes back). The queue, the method study's plan, a study
link's attention checks and the page's frame all make their claims here."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from annotation import judgment
from annotation.models import Assignment
from projects.models import Item, Project
from projects.selectors import item_responses


def claim_duration() -> timedelta:
    return timedelta(seconds=settings.CLAIM_SECONDS)


def assignment_drawn(
    *, project: Project, item: Item, annotator: AbstractBaseUser, now: datetime, expires_at: datetime
) -> Assignment:
    """A claim not yet saved, with the annotator's response order drawn."""
    positions = [response.position for response in item_responses(item)]
    order = judgment.response_order_draw(
        seed=project.seed, annotator_id=int(annotator.pk), item_id=item.pk, positions=positions
    )
    return Assignment(
        project=project,
        item=item,
        annotator_id=annotator.pk,
        status=Assignment.Status.CLAIMED,
        response_order=order,
        claimed_at=now,
        expires_at=expires_at,
    )


def assignment_new(*, project: Project, item: Item, annotator: AbstractBaseUser, now: datetime) -> Assignment:
    """A new claim, held for CLAIM_SECONDS from ``now``."""
    assignment = assignment_drawn(
        project=project, item=item, annotator=annotator, now=now, expires_at=now + claim_duration()
    )
    assignment.save(force_insert=True)
    return assignment


def assignment_reclaim(assignment: Assignment, *, now: datetime) -> Assignment:
    """The annotator's own assignment claimed again for CLAIM_SECONDS, keeping the response order they were shown."""
    assignment.status = Assignment.Status.CLAIMED
    assignment.claimed_at = now
    assignment.expires_at = now + claim_duration()
    assignment.save(update_fields=["status", "claimed_at", "expires_at", "updated_at"])
    return assignment


def assignment_claim_again(*, project: Project, item: Item, annotator: AbstractBaseUser, now: datetime) -> Assignment:
    """The annotator's own assignment of ``item`` claimed again (assignment_reclaim), or a new claim when they have
    none."""
    assignment = Assignment.objects.filter(item=item, annotator_id=annotator.pk).first()
    if assignment is None:
        return assignment_new(project=project, item=item, annotator=annotator, now=now)
    return assignment_reclaim(assignment, now=now)
