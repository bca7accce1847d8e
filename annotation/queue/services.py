"""The annotator's queue: claiming the next item, holding a named one, and the claim's lease.

``next_item_decide`` is the one place that decides which item comes next, for every caller (its rules are in its
docstring); ``next_item_pick`` is its ordinary scan (the queue's order). Claims are rows of ``Assignment``; an
item's slots are its overlap (plus the labels a lead asked for again) minus saved labels minus others' live claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import (
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    prefetch_related_objects,
)
from django.utils import timezone

from annotation import judgment
from annotation.checks import check_annotator, check_annotator_of, check_served, served
from annotation.claims import assignment_new, assignment_reclaim, claim_duration
from annotation.method_study import services as crossover_services
from annotation.models import Annotation, Assignment
from annotation.queue import order as queue_order
from annotation.requests import requests_to_serve
from annotation.selectors import live_claims_by_others
from config import compiled_sql
from config.compiled_sql import Builder
from projects.models import Item, Project, Response
from projects.selectors import item_responses, item_responses_remember, item_with_responses

# Set on a claim whose scan saw no label of the annotator on its item: the page then need not look for one.
_UNLABELLED = "_unlabelled"


def known_unlabelled(assignment: Assignment) -> bool:
    """Whether the claim that returned ``assignment`` saw, in its own scan, that the annotator has no label on the
    item (a fresh pick). False means unknown, not labelled."""
    return bool(getattr(assignment, _UNLABELLED, False))


def has_room(*, project: Project, item: Item, annotator_id: int, now: datetime) -> bool:
    """Whether another label still fits: saved labels plus others' live claims below the overlap.

    The item row is locked first, in a statement of its own: a count in the locking statement would use the
    snapshot taken before waiting for the lock and miss the claim of the transaction it waited for, so two
    annotators could both take its last slot.
    """
    if lock_rows(Item.objects.filter(pk=item.pk), skip_locked=False).values_list("pk", flat=True).first() is None:
        return False
    row = (
        Item.objects.filter(pk=item.pk)
        .annotate(claims=live_claims_by_others(annotator_id=annotator_id, now=now))
        .values("annotation_count", "claims", "extra_labels")
    )
    found = row.first()
    # A lead may have sent the item back for more labels (annotation.notes.services.item_send_back).
    return found is not None and found["annotation_count"] + found["claims"] < project.overlap + found["extra_labels"]


def lock_rows(queryset: QuerySet[Any], *, skip_locked: bool) -> QuerySet[Any]:
    # SQLite has no row locks; it serialises writers anyway, so the plain query is correct there.
    if connection.features.has_select_for_update:
        if skip_locked and connection.features.has_select_for_update_skip_locked:
            return queryset.select_for_update(skip_locked=True)
        return queryset.select_for_update()
    return queryset


# --- the queue --------------------------------------------------------------------------------------------------

#: About one saved item in four is followed by one of the person's open label requests (when they have one), so the
#: requests come mixed among ordinary items and look like them; the rest are served when nothing else is left.
REQUEST_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class AfterSave:
    """What a save saw under its lock that the next decision needs, so the decision asks no statement for it."""

    item_id: int
    #: The item of the person's first open label request in the project, if any (their next request to serve).
    request_item_id: int | None
    #: The person held no live claim on another item of the project (their own claim need not be looked for).
    own_claim_absent: bool
    #: The project was a method study (its plan is served in order; requests wait until the share is done).
    method_study: bool


def assignment_claim_next(
    *, project: Project, annotator: AbstractBaseUser, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """Claim the next item for this annotator, or None when nothing is left for them (:func:`next_item_decide`).
    ``exclude_item_ids`` are never picked here (a study's attention checks, which it serves on its own schedule)."""
    return next_item_decide(project=project, annotator=annotator, exclude_item_ids=exclude_item_ids)


def next_item_decide(
    *,
    project: Project,
    annotator: AbstractBaseUser,
    exclude_item_ids: Sequence[int] = (),
    after_save: AfterSave | None = None,
    claim: bool = True,
) -> Assignment | None:
    """The one place that decides which item this annotator gets next, for every caller: the page's next and
    save-and-next, the API's save, repeats, method studies and study participants (whose attention checks are
    passed in ``exclude_item_ids``, served by the study on its own schedule). The first rule that gives an item wins:

    1. After a save (``after_save``), outside a method study: on the person's request turn
       (``judgment.request_turn``, about one save in :data:`REQUEST_SHARE`), their next open label request, unless
       it is the item just saved. It becomes their live claim even when the caller asked for no next item
       (``claim`` False: the API's save), so their next ask returns it by rule 3.
    2. ``claim`` False, or the project closed: nothing.
    3. Their own live claim, its lease renewed (a reload shows the same item), unless it was handed off since
       (``checks.served``); not looked for when the save saw none under its lock.
    4. While collecting, a method study serves a due repeat, then its stored plan
       (``annotation.method_study.services.assignment_claim_planned``); any other project an unannounced repeat, then an
       escalated item (``annotation.queue.order``), then the ordinary scan (:func:`next_item_pick`).
    5. Their open label requests (also after a handoff, where only audit requests are served).

    A new claim is written in the caller's transaction when there is one (the save-and-next: no savepoint), in one
    of its own otherwise.
    """
    now = timezone.now()
    if after_save is not None:
        on_turn = _request_on_turn(project=project, annotator=annotator, after_save=after_save, now=now)
        if on_turn is not None or not claim:
            return on_turn
    if not claim:
        return None
    check_annotator(project=project, annotator=annotator)
    if project.phase == Project.Phase.CLOSED:
        return None
    if after_save is None or not after_save.own_claim_absent:
        own = _own_claim_extend(project=project, annotator=annotator, now=now)
        if own is not None and served(project=project, item_id=own.item_id, annotator_id=int(annotator.pk)):
            return own
    if project.phase == Project.Phase.COLLECTING:
        found = _claim_new(project=project, annotator=annotator, now=now, exclude_item_ids=exclude_item_ids)
        if found is not None:
            return found
    next_item = requests_to_serve(project=project, annotator_id=int(annotator.pk)).first()
    if next_item is None:
        return None
    return request_serve(project=project, annotator=annotator, item_id=next_item, now=now)


def _request_on_turn(
    *, project: Project, annotator: AbstractBaseUser, after_save: AfterSave, now: datetime
) -> Assignment | None:
    """Rule 1 of :func:`next_item_decide`."""
    request_item = after_save.request_item_id
    if request_item is None or request_item == after_save.item_id or after_save.method_study:
        return None
    if not judgment.request_turn(
        seed=project.seed, annotator_id=int(annotator.pk), item_id=after_save.item_id, share=REQUEST_SHARE
    ):
        return None
    return request_serve(project=project, annotator=annotator, item_id=request_item, now=now)


def request_serve(*, project: Project, annotator: AbstractBaseUser, item_id: int, now: datetime) -> Assignment | None:
    """Put the item of an open label request in the person's queue as their live claim (the next item they get).
    A request item bypasses the overlap: its label is wanted from this person whatever others gave. None when the
    project's phase does not serve it (a request drawn before a handoff)."""
    if not served(project=project, item_id=item_id, annotator_id=int(annotator.pk)):
        return None
    item = item_with_responses(project=project, item_id=item_id)
    if item is None:
        return None
    assignment = assignment_new(project=project, item=item, annotator=annotator, now=now)
    assignment.item = item
    return assignment


def _own_claim_extend(*, project: Project, annotator: AbstractBaseUser, now: datetime) -> Assignment | None:
    """The annotator's live claim in this project, its lease renewed, with its item and responses; None if none.

    On PostgreSQL the renewal is one UPDATE … RETURNING (the claim found and extended in one statement, re-checked
    under the row lock, so a claim saved meanwhile is not revived) and the item comes with its responses; elsewhere
    a read and a write. A row only this annotator writes: it needs no transaction of its own.
    """
    expires_at = now + claim_duration()
    if connection.vendor != "postgresql":
        own = (
            Assignment.objects.filter(
                project=project, annotator_id=annotator.pk, status=Assignment.Status.CLAIMED, expires_at__gt=now
            )
            .select_related("item")
            .order_by("-claimed_at", "-pk")
            .first()
        )
        if own is not None:
            own.expires_at = expires_at
            own.save(update_fields=["expires_at", "updated_at"])
        return own
    table = Assignment._meta.db_table
    columns = ", ".join(connection.ops.quote_name(str(field.column)) for field in Assignment._meta.concrete_fields)
    renewed = list(
        Assignment.objects.raw(
            f"UPDATE {table} SET expires_at = %s, updated_at = %s "
            f"WHERE id = (SELECT id FROM {table} WHERE project_id = %s AND annotator_id = %s AND status = %s "
            "AND expires_at > %s ORDER BY claimed_at DESC, id DESC LIMIT 1) AND status = %s AND expires_at > %s "
            f"RETURNING {columns}",
            [expires_at, now, project.pk, annotator.pk, Assignment.Status.CLAIMED, now, Assignment.Status.CLAIMED, now],
        )
    )
    if not renewed:
        return None
    own = renewed[0]
    item = item_with_responses(project=project, item_id=own.item_id)
    if item is None:  # deleted in between: the cascade takes the claim with it
        return None
    own.item = item
    return own


# Joins the caller's transaction without a savepoint (the save-and-next); one of its own otherwise, so the candidate
# row stays locked until the claim is written.
@transaction.atomic(savepoint=False)
def _claim_new(
    *, project: Project, annotator: AbstractBaseUser, now: datetime, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """Rule 4 of :func:`next_item_decide`: the scan and the new claim."""
    if project.mode == Project.Mode.CROSSOVER:  # a method study serves its stored plan, not the shared queue
        # A due repeat first: the original's item is in the person's plan, so the page and the save judge it with
        # the method of that cell (crossover_selectors.project_as_assigned).
        repeat = queue_order.repeat_to_serve(project=project, annotator_id=int(annotator.pk), now=now)
        if repeat is not None:
            return repeat
        return crossover_services.assignment_claim_planned(
            project=project, annotator=annotator, now=now, exclude_item_ids=exclude_item_ids
        )
    first = queue_order.queue_first(project=project, annotator=annotator, now=now)
    if isinstance(first, Assignment):  # an unannounced repeat: the person's own earlier assignment
        return first
    if first is not None and (escalated := _first_with_room(first)) is not None:
        claimed = assignment_new(project=project, item=escalated, annotator=annotator, now=now)
        claimed.item = escalated
        return claimed
    chosen = next_item_pick(project=project, annotator=annotator, now=now, exclude_item_ids=exclude_item_ids)
    if chosen is None:
        return None
    mine_id = getattr(chosen, "mine_id", None)
    if mine_id is None:
        claimed = assignment_new(project=project, item=chosen, annotator=annotator, now=now)
    else:
        claimed = Assignment.objects.get(pk=mine_id)
        # Their own expired claim: take it again, keeping the response order they were shown.
        claimed.status = Assignment.Status.CLAIMED
        claimed.claimed_at = now
        claimed.expires_at = now + claim_duration()
        claimed.save(update_fields=["status", "claimed_at", "expires_at", "updated_at"])
    claimed.item = chosen
    if not getattr(chosen, "labelled", True):
        setattr(claimed, _UNLABELLED, True)
    return claimed


def next_item_pick(
    *, project: Project, annotator: AbstractBaseUser, now: datetime, exclude_item_ids: Sequence[int] = ()
) -> Item | None:
    """The ordinary scan of :func:`next_item_decide`: the first item that fits, locked, with its responses; None
    when nothing fits. The queue's order lives here and only here.

    Items with the fewest saved labels first (every item gets its first label before any gets its last), and within
    that, the project's seeded queue key rotated by a per-annotator offset, so each annotator walks the items in
    their own reproducible random order. Each step is an index range scan on (project, annotation_count,
    queue_key) that stops at the first fit: the work per request does not grow with the project. The item comes
    annotated with ``mine_id`` (the annotator's own earlier, expired claim on it, if any) and ``labelled``
    (whether they have a label on it, e.g. an imported one), read in the same statement.
    """
    # Each builder gets exactly the values it uses: compiled_sql refuses a value bound to no parameter.
    values: dict[str, Any] = {
        "project_id": project.pk,
        "annotator_id": int(annotator.pk),
        "now": now,
        "exclude": list(exclude_item_ids),
    }
    offset = judgment.queue_offset(seed=project.seed, annotator_id=int(annotator.pk))
    for count in range(project.overlap):
        for upper in (True, False):
            chosen = _first_fitting(
                ("scan", upper),
                _scan_upper if upper else _scan_lower,
                {**values, "offset": offset, "count": count, "room": project.overlap - count},
            )
            if chosen is not None:
                return chosen
    # Items a lead sent back for more labels (their count is at or past the overlap), fewest labels first as
    # everywhere: scanned only when nothing else fits, so the usual claim costs no extra statement.
    return _first_fitting(("sent back",), _sent_back, {**values, "overlap": project.overlap})


# The scans are built from named values alone (compiled_sql compiles each shape once per process).


def _own_rows(values: Mapping[str, Any]) -> tuple[QuerySet[Assignment], QuerySet[Assignment], QuerySet[Annotation]]:
    finished = Assignment.objects.filter(
        item=OuterRef("pk"),
        annotator_id=values["annotator_id"],
        status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED],
    )
    own_rows = Assignment.objects.filter(item=OuterRef("pk"), annotator_id=values["annotator_id"])
    own_label = Annotation.objects.filter(item=OuterRef("pk"), annotator_id=values["annotator_id"])
    return finished, own_rows, own_label


def _scan(values: Mapping[str, Any], half: Q) -> QuerySet[Item]:
    finished, own_rows, own_label = _own_rows(values)
    return (
        Item.objects.filter(half, project_id=values["project_id"], annotation_count=values["count"])
        .filter(~Exists(finished))
        .exclude(pk__in=values["exclude"])
        .alias(claims=live_claims_by_others(annotator_id=values["annotator_id"], now=values["now"]))
        .filter(claims__lt=values["room"])
        # Their own expired claim on it and their label, if any, in the same statement.
        .annotate(mine_id=Subquery(own_rows.values("pk")[:1]), labelled=Exists(own_label))
        .order_by("queue_key")
    )


def _scan_upper(values: Mapping[str, Any]) -> QuerySet[Item]:
    return _scan(values, Q(queue_key__gte=values["offset"]))


def _scan_lower(values: Mapping[str, Any]) -> QuerySet[Item]:
    return _scan(values, Q(queue_key__lt=values["offset"]))


def _sent_back(values: Mapping[str, Any]) -> QuerySet[Item]:
    finished, own_rows, own_label = _own_rows(values)
    overlap = values["overlap"]
    return (
        Item.objects.filter(
            project_id=values["project_id"], extra_labels__gt=0, annotation_count__lt=F("extra_labels") + overlap
        )
        .filter(~Exists(finished))
        .exclude(pk__in=values["exclude"])
        .alias(claims=live_claims_by_others(annotator_id=values["annotator_id"], now=values["now"]))
        .filter(claims__lt=F("extra_labels") + overlap - F("annotation_count"))
        .annotate(mine_id=Subquery(own_rows.values("pk")[:1]), labelled=Exists(own_label))
        .order_by("annotation_count", "queue_key")
    )


def _first_fitting(key: tuple[object, ...], build: Builder, values: Mapping[str, Any]) -> Item | None:
    """:func:`_first_with_room` of ``build(values)``; on PostgreSQL through SQL compiled once per process (the same
    statements: the lock with SKIP LOCKED, then the re-check that reads the responses)."""
    if not compiled_sql.enabled():
        return _first_with_room(build(values))

    def lock(named: Mapping[str, Any]) -> QuerySet[Item]:
        return lock_rows(build(named).exclude(pk__in=named["passed"]), skip_locked=True)

    def recheck(named: Mapping[str, Any]) -> QuerySet[Response]:
        still_fits = build(named).filter(pk=named["chosen"]).values("pk")
        return Response.objects.filter(item__in=still_fits).filter(item_id__in=[named["chosen"]])

    passed: list[int] = []
    while True:
        chosen = compiled_sql.first_row(Item, (*key, "lock"), lock, {**values, "passed": passed})
        if chosen is None:
            return None
        responses = compiled_sql.rows(Response, (*key, "recheck"), recheck, {**values, "chosen": chosen.pk})
        if responses:
            item_responses_remember(chosen, responses)
            return chosen
        passed.append(chosen.pk)


def _first_with_room(candidates: QuerySet[Item]) -> Item | None:
    """The first candidate, locked, that still has room once every claim committed before the lock is counted.

    The scan counts others' claims in its statement's snapshot. A claim of the same item that committed after that
    snapshot was taken but before the scan reached the row leaves the row unlocked and its own columns unchanged,
    so PostgreSQL neither skips nor re-checks it: the count is one short and two annotators could share the last
    slot. Holding the row lock (every claimer takes it before writing), a new statement sees every such claim.
    """
    passed: list[int] = []
    while True:
        chosen = lock_rows(candidates.exclude(pk__in=passed), skip_locked=True).first()
        # SQLite serialises writers: its single statement already saw every committed claim.
        if chosen is None or connection.vendor != "postgresql":
            return chosen
        # The re-check reads the item's responses, which the claim needs next: it costs no statement of its own.
        # Every item has responses, so none read means the item no longer fits.
        still_fits = candidates.filter(pk=chosen.pk).values("pk")
        prefetch_related_objects([chosen], Prefetch("responses", queryset=Response.objects.filter(item__in=still_fits)))
        if item_responses(chosen):
            return chosen
        passed.append(chosen.pk)


@transaction.atomic
def assignment_claim_item(*, project: Project, item: Item, annotator: AbstractBaseUser) -> Assignment:
    """This annotator's hold on one named item (opening it from history, or a link): theirs if they have one,
    otherwise a new claim when the item still has room."""
    check_annotator_of(project=project, item=item, annotator=annotator)
    check_served(project=project, item_id=item.pk, annotator_id=int(annotator.pk))
    now = timezone.now()
    mine = lock_rows(Assignment.objects.filter(item=item, annotator_id=annotator.pk), skip_locked=False).first()
    if mine is not None and mine.status == Assignment.Status.DONE:
        return mine
    if mine is not None and mine.status == Assignment.Status.CLAIMED and mine.expires_at > now:
        mine.expires_at = now + claim_duration()
        mine.save(update_fields=["expires_at", "updated_at"])
        return mine
    if mine is not None and mine.status == Assignment.Status.SKIPPED:
        return mine
    if not has_room(project=project, item=item, annotator_id=int(annotator.pk), now=now):
        raise ValidationError({"__all__": "This item already has all the labels it needs. Take the next item."})
    if mine is None:
        return assignment_new(project=project, item=item, annotator=annotator, now=now)
    return assignment_reclaim(mine, now=now)
