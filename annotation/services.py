"""Writes of the annotator's work: claims, saves (with revisions), skips and suggestion exposures.

Independent of HTTP: the page and the REST API call the same functions. Every function validates everything first
(check_*) and writes nothing when it refuses, raising ValidationError with field-level messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation import judgment, queue_order
from annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    JudgmentValue,
    LabelRequest,
    ResolutionChoice,
    SuggestionExposure,
)
from annotation.request_selectors import requests_to_serve
from annotation.selectors import PURPOSE_ACCEPT, PURPOSE_PAGE, PURPOSE_RESOLUTION, suggestion_visible_for
from config import events
from projects.models import PERMILLE, TIE, Criterion, Item, Membership, Project, Response, Suggestion
from projects.selectors import item_responses, item_with_responses, project_criteria, role_remembered
from projects.services import project_mark_labelling_started

# One save never adds more than an hour: a tab left open overnight is not an hour of work.
MAX_TIME_PER_SAVE_MS = 60 * 60 * 1000
# Slack between the server's claim time and the client's clock start (page render, network).
CLAIM_TIME_SLACK_MS = 60 * 1000
REVISION_REASONS = ("save", "resolution", "api", "import")
SOURCES = ("page", "api", "import")
SKIP_REASON_MAX = 300
#: About one saved item in four is followed by one of the person's open label requests (when they have one), so the
#: requests come mixed among ordinary items and look like them; the rest are served when nothing else is left.
REQUEST_SHARE = 0.25
_WHOLE_NUMBER = re.compile(r"-?\d+")


def _claim_duration() -> timedelta:
    return timedelta(seconds=settings.CLAIM_SECONDS)


# --- checks -----------------------------------------------------------------------------------------------------


def check_annotator(*, project: Project, annotator: AbstractBaseUser) -> None:
    if role_remembered(user=annotator, project_id=project.pk) == Membership.Role.ANNOTATOR:
        return  # checked a moment ago in this request (projects.selectors.project_get_for_annotator)
    if not Membership.objects.filter(project=project, user_id=annotator.pk, role=Membership.Role.ANNOTATOR).exists():
        raise ValidationError({"annotator": "You do not annotate this project."})


def check_annotator_of(*, project: Project, item: Item, annotator: AbstractBaseUser) -> None:
    check_annotator(project=project, annotator=annotator)
    if item.project_id != project.pk:
        raise ValidationError({"item": "This item does not belong to this project."})
    if project.phase == Project.Phase.CLOSED:
        raise ValidationError({"__all__": "This project is closed: labels can no longer be saved."})


def _whole_number(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and _WHOLE_NUMBER.fullmatch(raw.strip()):
        return int(raw.strip())
    return None


def value_error_key(position: int, criterion_name: str) -> str:
    return f"values[{position}][{criterion_name}]"


def check_ifs_values(
    *, values: Any, responses: Sequence[Response], criteria: Sequence[Criterion]
) -> dict[tuple[int, str], tuple[int, int]]:
    """Every response × criterion exactly once, whole per-mille, μ, ν ≥ 0 and μ + ν ≤ 1000."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes) or not values:
        raise ValidationError({"values": "Give (μ, ν) for every response and criterion."})
    positions = {response.position for response in responses}
    names = {criterion.name for criterion in criteria}
    errors: dict[str, list[str]] = {}
    cleaned: dict[tuple[int, str], tuple[int, int]] = {}
    for index, entry in enumerate(values):
        if not isinstance(entry, Mapping):
            errors.setdefault("values", []).append(
                f"Entry {index + 1} is not an object with response, criterion, mu, nu."
            )
            continue
        position = _whole_number(entry.get("response"))
        name = entry.get("criterion")
        if position not in positions:
            errors.setdefault("values", []).append(
                f"Entry {index + 1}: response must be one of the stored positions {sorted(positions)}."
            )
            continue
        if not isinstance(name, str) or name not in names:
            errors.setdefault("values", []).append(
                f"Entry {index + 1}: criterion must be one of {', '.join(sorted(names))}."
            )
            continue
        key = value_error_key(position, name)
        if (position, name) in cleaned or key in errors:
            errors.setdefault(key, []).append("Given more than once.")
            continue
        mu, nu = _whole_number(entry.get("mu")), _whole_number(entry.get("nu"))
        problems = []
        for label, number in (("μ", mu), ("ν", nu)):
            if number is None:
                problems.append(f"{label} must be a whole number of per-mille (0 to 1000).")
            elif not 0 <= number <= PERMILLE:
                problems.append(f"{label} must be from 0 to 1000 ‰ (0 to 100 %); got {number}.")
        if not problems and mu is not None and nu is not None and mu + nu > PERMILLE:
            problems.append(
                f"Support and opposition add up to {(mu + nu) / 10:g} %; together they can be at most 100 %."
            )
        if problems:
            errors[key] = problems
            continue
        cleaned[(position, name)] = (int(mu or 0), int(nu or 0))
    for position in sorted(positions):
        for name in sorted(names):
            key = value_error_key(position, name)
            if (position, name) not in cleaned and key not in errors:
                errors[key] = ["Missing: every response needs μ and ν for every criterion."]
    if errors:
        raise ValidationError(errors)
    return cleaned


def check_judgment(
    *,
    project: Project,
    responses: Sequence[Response],
    criteria: Sequence[Criterion],
    values: Any,
    binary_choice: Any,
    likert_value: Any,
) -> tuple[dict[tuple[int, str], tuple[int, int]], int | None, int | None]:
    """The judgment in the project's mode, cleaned; anything for another mode is refused, not ignored."""
    mode = project.mode
    if mode == Project.Mode.IFS:
        if binary_choice is not None or likert_value is not None:
            raise ValidationError({"__all__": "This project labels with IFS sliders, not a choice or a scale."})
        return check_ifs_values(values=values, responses=responses, criteria=criteria), None, None
    if values:
        raise ValidationError({"values": f"This project labels in {mode} mode; slider values are not accepted."})
    if mode == Project.Mode.BINARY:
        if likert_value is not None:
            raise ValidationError({"likert_value": "This project labels with a binary choice, not a scale."})
        choice = _whole_number(binary_choice)
        allowed = [r.position for r in responses] + [TIE]
        if binary_choice is None or binary_choice == "":
            raise ValidationError({"binary_choice": "Choose the better response, or tie."})
        if choice not in allowed:
            raise ValidationError({"binary_choice": f"Expected a stored position {allowed[:-1]} or -1 for a tie."})
        return {}, choice, None
    if binary_choice is not None:
        raise ValidationError({"binary_choice": "This project labels on a scale, not with a binary choice."})
    if len(responses) != 2:
        raise ValidationError({"likert_value": "A side-by-side scale needs exactly two responses."})
    point = _whole_number(likert_value)
    if likert_value is None or likert_value == "":
        raise ValidationError({"likert_value": "Choose a point on the scale."})
    if point is None or not 1 <= point <= project.likert_points:
        raise ValidationError({"likert_value": f"Expected a whole number from 1 to {project.likert_points}."})
    return {}, None, point


def _active_claims_by_others(*, annotator_id: int, now: datetime) -> Coalesce:
    claims = (
        Assignment.objects.filter(item=OuterRef("pk"), status=Assignment.Status.CLAIMED, expires_at__gt=now)
        .exclude(annotator_id=annotator_id)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(claims, output_field=IntegerField()), Value(0))


def _has_room(*, project: Project, item: Item, annotator_id: int, now: datetime) -> bool:
    """Whether another label still fits: saved labels plus others' live claims below the overlap.

    The item row is locked first, in a statement of its own: a count in the locking statement would use the
    snapshot taken before waiting for the lock and miss the claim of the transaction it waited for, so two
    annotators could both take its last slot.
    """
    if _lock(Item.objects.filter(pk=item.pk), skip_locked=False).values_list("pk", flat=True).first() is None:
        return False
    row = (
        Item.objects.filter(pk=item.pk)
        .annotate(claims=_active_claims_by_others(annotator_id=annotator_id, now=now))
        .values("annotation_count", "claims", "extra_labels")
    )
    found = row.first()
    # A lead may have sent the item back for more labels (annotation.note_services.item_send_back).
    return found is not None and found["annotation_count"] + found["claims"] < project.overlap + found["extra_labels"]


def _lock(queryset: QuerySet[Any], *, skip_locked: bool) -> QuerySet[Any]:
    # SQLite has no row locks; it serialises writers anyway, so the plain query is correct there.
    if connection.features.has_select_for_update:
        if skip_locked and connection.features.has_select_for_update_skip_locked:
            return queryset.select_for_update(skip_locked=True)
        return queryset.select_for_update()
    return queryset


def _new_assignment(*, project: Project, item: Item, annotator: AbstractBaseUser, now: datetime) -> Assignment:
    positions = [response.position for response in item_responses(item)]
    order = judgment.response_order_draw(
        seed=project.seed, annotator_id=int(annotator.pk), item_id=item.pk, positions=positions
    )
    return Assignment.objects.create(
        project=project,
        item=item,
        annotator_id=annotator.pk,
        status=Assignment.Status.CLAIMED,
        response_order=order,
        claimed_at=now,
        expires_at=now + _claim_duration(),
    )


# --- the queue --------------------------------------------------------------------------------------------------


def assignment_claim_next(
    *, project: Project, annotator: AbstractBaseUser, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """Claim the next item for this annotator, or None when nothing is left for them.

    The order: the annotator's own live claim first (a reload shows the same item); then items with the fewest
    saved labels first (every item gets its first label before any gets its last), and within that, the project's
    seeded queue key rotated by a per-annotator offset, so each annotator walks the items in their own reproducible
    random order. Each step is an index range scan on (project, annotation_count, queue_key) that stops at the
    first fit: the work per request does not grow with the project. ``exclude_item_ids`` are never picked here
    (a study's attention checks, which it serves on its own schedule).
    """
    return _claim_next(project=project, annotator=annotator, exclude_item_ids=exclude_item_ids, in_transaction=False)


def _claim_next(
    *, project: Project, annotator: AbstractBaseUser, exclude_item_ids: Sequence[int], in_transaction: bool
) -> Assignment | None:
    check_annotator(project=project, annotator=annotator)
    if project.phase == Project.Phase.CLOSED:
        return None
    now = timezone.now()
    own = _own_claim_extend(project=project, annotator=annotator, now=now)
    if own is not None:
        return own
    if project.phase == Project.Phase.COLLECTING:
        first = queue_order.queue_first(project=project, annotator=annotator, now=now)
        if isinstance(first, Assignment):  # an unannounced repeat: the person's own earlier assignment
            return first
        if first is not None and (escalated := _first_with_room(first)) is not None:
            return _new_assignment(project=project, item=escalated, annotator=annotator, now=now)
        # Inside a caller's transaction the scan needs no block of its own (a savepoint would only add two
        # statements).
        claim = _claim_new_in_transaction if in_transaction else _claim_new
        found = claim(project=project, annotator=annotator, now=now, exclude_item_ids=exclude_item_ids)
        if found is not None:
            return found
    # Nothing ordinary left (or handed off to the model, where only audit requests are served): the person's open
    # label requests, if any.
    next_item = requests_to_serve(project=project, annotator_id=int(annotator.pk)).first()
    if next_item is None:
        return None
    return _request_serve(project=project, annotator=annotator, item_id=next_item, now=now)


def _request_serve(*, project: Project, annotator: AbstractBaseUser, item_id: int, now: datetime) -> Assignment | None:
    """Put the item of an open label request in the person's queue as their live claim (the next item they get).
    A request item bypasses the overlap: its label is wanted from this person whatever others gave."""
    item = item_with_responses(project=project, item_id=item_id)
    if item is None:
        return None
    assignment = _new_assignment(project=project, item=item, annotator=annotator, now=now)
    assignment.item = item
    return assignment


def _own_claim_extend(*, project: Project, annotator: AbstractBaseUser, now: datetime) -> Assignment | None:
    """The annotator's live claim in this project, its lease renewed, with its item and responses; None if none.

    On PostgreSQL the renewal is one UPDATE … RETURNING (the claim found and extended in one statement, re-checked
    under the row lock, so a claim saved meanwhile is not revived) and the item comes with its responses; elsewhere
    a read and a write. A row only this annotator writes: it needs no transaction of its own.
    """
    expires_at = now + _claim_duration()
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


@transaction.atomic
def _claim_new(
    *, project: Project, annotator: AbstractBaseUser, now: datetime, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """The scan and the claim, in one transaction: the candidate row stays locked until the claim is written."""
    return _claim_new_in_transaction(project=project, annotator=annotator, now=now, exclude_item_ids=exclude_item_ids)


def _claim_new_in_transaction(
    *, project: Project, annotator: AbstractBaseUser, now: datetime, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """:func:`_claim_new` inside the caller's transaction."""
    offset = judgment.queue_offset(seed=project.seed, annotator_id=int(annotator.pk))
    finished = Assignment.objects.filter(
        item=OuterRef("pk"),
        annotator_id=annotator.pk,
        status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED],
    )
    own_rows = Assignment.objects.filter(item=OuterRef("pk"), annotator_id=annotator.pk)
    chosen: Item | None = None
    for count in range(project.overlap):
        for half in (Q(queue_key__gte=offset), Q(queue_key__lt=offset)):
            candidates = (
                Item.objects.filter(half, project=project, annotation_count=count)
                .filter(~Exists(finished))
                .exclude(pk__in=exclude_item_ids)
                .alias(claims=_active_claims_by_others(annotator_id=int(annotator.pk), now=now))
                .filter(claims__lt=project.overlap - count)
                # Their own expired claim on it, if any, in the same statement.
                .annotate(mine_id=Subquery(own_rows.values("pk")[:1]))
                .order_by("queue_key")
            )
            chosen = _first_with_room(candidates)
            if chosen is not None:
                break
        if chosen is not None:
            break
    if chosen is None:
        # Items a lead sent back for more labels (their count is at or past the overlap), fewest labels first as
        # everywhere: scanned only when nothing else fits, so the usual claim costs no extra statement.
        sent_back = (
            Item.objects.filter(
                project=project, extra_labels__gt=0, annotation_count__lt=F("extra_labels") + project.overlap
            )
            .filter(~Exists(finished))
            .exclude(pk__in=exclude_item_ids)
            .alias(claims=_active_claims_by_others(annotator_id=int(annotator.pk), now=now))
            .filter(claims__lt=F("extra_labels") + project.overlap - F("annotation_count"))
            .annotate(mine_id=Subquery(own_rows.values("pk")[:1]))
            .order_by("annotation_count", "queue_key")
        )
        chosen = _first_with_room(sent_back)
    if chosen is None:
        return None
    mine_id = getattr(chosen, "mine_id", None)
    if mine_id is None:
        return _new_assignment(project=project, item=chosen, annotator=annotator, now=now)
    mine = Assignment.objects.get(pk=mine_id)
    # Their own expired claim: take it again, keeping the response order they were shown.
    mine.status = Assignment.Status.CLAIMED
    mine.claimed_at = now
    mine.expires_at = now + _claim_duration()
    mine.save(update_fields=["status", "claimed_at", "expires_at", "updated_at"])
    return mine


def _first_with_room(candidates: QuerySet[Item]) -> Item | None:
    """The first candidate, locked, that still has room once every claim committed before the lock is counted.

    The scan counts others' claims in its statement's snapshot. A claim of the same item that committed after that
    snapshot was taken but before the scan reached the row leaves the row unlocked and its own columns unchanged,
    so PostgreSQL neither skips nor re-checks it: the count is one short and two annotators could share the last
    slot. Holding the row lock (every claimer takes it before writing), a new statement sees every such claim.
    """
    passed: list[int] = []
    while True:
        chosen = _lock(candidates.exclude(pk__in=passed), skip_locked=True).first()
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
    now = timezone.now()
    mine = _lock(Assignment.objects.filter(item=item, annotator_id=annotator.pk), skip_locked=False).first()
    if mine is not None and mine.status == Assignment.Status.DONE:
        return mine
    if mine is not None and mine.status == Assignment.Status.CLAIMED and mine.expires_at > now:
        mine.expires_at = now + _claim_duration()
        mine.save(update_fields=["expires_at", "updated_at"])
        return mine
    if mine is not None and mine.status == Assignment.Status.SKIPPED:
        return mine
    if not _has_room(project=project, item=item, annotator_id=int(annotator.pk), now=now):
        raise ValidationError({"__all__": "This item already has all the labels it needs. Take the next item."})
    if mine is None:
        return _new_assignment(project=project, item=item, annotator=annotator, now=now)
    mine.status = Assignment.Status.CLAIMED
    mine.claimed_at = now
    mine.expires_at = now + _claim_duration()
    mine.save(update_fields=["status", "claimed_at", "expires_at", "updated_at"])
    return mine


# --- saving -----------------------------------------------------------------------------------------------------


def _clamp_time(*, time_spent_ms: Any, assignment: Assignment | None, now: datetime) -> int:
    spent = _whole_number(time_spent_ms) or 0
    ceiling = MAX_TIME_PER_SAVE_MS
    if assignment is not None and assignment.status == Assignment.Status.CLAIMED:
        # Not more than the time since the server handed out the item (plus slack for the client's clock).
        elapsed = int((now - assignment.claimed_at).total_seconds() * 1000) + CLAIM_TIME_SLACK_MS
        ceiling = min(ceiling, max(0, elapsed))
    return max(0, min(spent, ceiling))


def check_client_token(client_token: Any) -> str | None:
    if client_token in (None, ""):
        return None
    if not isinstance(client_token, str) or len(client_token) > 64 or not client_token.isprintable():
        raise ValidationError({"client_token": "Expected a string of at most 64 printable characters."})
    return client_token


def _annotation_save(
    *,
    project: Project,
    item: Item,
    annotator: AbstractBaseUser,
    values: Sequence[Mapping[str, Any]] | None = None,
    binary_choice: int | None = None,
    likert_value: int | None = None,
    client_token: str | None = None,
    time_spent_ms: int = 0,
    accepted: bool = False,
    reason: str = "save",
    source: str = "page",
) -> Annotation:
    """Save this annotator's judgment of ``item`` and append a revision; return the annotation.

    ``values``: for IFS projects, one mapping per response × criterion:
    ``{"response": <stored position>, "criterion": <criterion name>, "mu": <0..1000>, "nu": <0..1000>}``.
    ``binary_choice``: stored position or -1 (tie). ``likert_value``: 1..k, 1 = position 0 strongly preferred.
    The same ``client_token`` twice (double click, retry) is one revision: the second call returns the annotation
    unchanged. Needs a live claim, an existing annotation to edit, or room left on the item.
    """
    check_annotator_of(project=project, item=item, annotator=annotator)
    if reason not in REVISION_REASONS:
        raise ValidationError({"reason": f"Expected one of {', '.join(REVISION_REASONS)}."})
    if source not in SOURCES:
        raise ValidationError({"source": f"Expected one of {', '.join(SOURCES)}."})
    token = check_client_token(client_token)
    responses = item_responses(item)
    criteria = project_criteria(project)
    cleaned, choice, point = check_judgment(
        project=project,
        responses=responses,
        criteria=criteria,
        values=values,
        binary_choice=binary_choice,
        likert_value=likert_value,
    )

    now = timezone.now()
    # The assignment row serialises saves of one annotator × item (double clicks, retries, two tabs).
    exposures = SuggestionExposure.objects.filter(item=item, annotator_id=annotator.pk)
    open_requests = LabelRequest.objects.filter(item=item, annotator_id=annotator.pk, status=LabelRequest.Status.OPEN)
    # Whether the suggestion was shown (or accepted) comes with the locked row, in one statement.
    own_assignment = _lock(
        Assignment.objects.filter(item=item, annotator_id=annotator.pk).annotate(
            exposed=Exists(exposures),
            accept_exposed=Exists(exposures.filter(kind=SuggestionExposure.Kind.ACCEPT)),
            labelled=Exists(Annotation.objects.filter(item=item, annotator_id=annotator.pk)),
            open_request=Exists(open_requests),
            next_request_item=Subquery(requests_to_serve(project=project, annotator_id=int(annotator.pk))[:1]),
        ),
        skip_locked=False,
    )
    assignment = own_assignment.first()
    if assignment is None:
        # No row to serialise on yet (an API save without a claim): the item row does it, then look again, so two
        # simultaneous first saves do not both create the assignment.
        _lock(Item.objects.filter(pk=item.pk), skip_locked=False).values("pk").first()
        assignment = own_assignment.all().first()
    # A first save (the common case) needs no read of the annotation: the locked row said there is none.
    labelled = assignment is None or bool(assignment.labelled)
    annotation = Annotation.objects.filter(item=item, annotator_id=annotator.pk).first() if labelled else None
    if annotation is not None and token is not None and annotation.revisions.filter(client_token=token).exists():
        return annotation
    if annotation is None:
        live_claim = (
            assignment is not None and assignment.status == Assignment.Status.CLAIMED and assignment.expires_at > now
        )
        requested = bool(assignment.open_request) if assignment is not None else open_requests.exists()
        if (
            not live_claim
            and not requested
            and not _has_room(project=project, item=item, annotator_id=int(annotator.pk), now=now)
        ):
            raise ValidationError(
                {
                    "__all__": "Your claim on this item expired and it now has all the labels it needs. Nothing was "
                    "saved; take the next item."
                }
            )
    elif reason == "resolution" and project.suggestion_display != Project.SuggestionDisplay.AFTER_LABEL:
        raise ValidationError({"reason": "Only after-label projects have a resolution step."})
    if reason == "resolution" and annotation is None:
        raise ValidationError({"reason": "A resolution changes a saved label; there is none yet."})
    if assignment is not None:
        exposed, accept_exposed = bool(assignment.exposed), bool(assignment.accept_exposed)
    else:
        exposed = exposures.exists()
        accept_exposed = exposed and exposures.filter(kind=SuggestionExposure.Kind.ACCEPT).exists()
    if accepted and not accept_exposed:
        raise ValidationError({"accepted": "No suggestion was accepted for this item."})

    # Checks done: from here on, write.
    if assignment is None:
        assignment = _new_assignment(project=project, item=item, annotator=annotator, now=now)
    spent = _clamp_time(time_spent_ms=time_spent_ms, assignment=assignment, now=now)
    shown = (annotation is not None and annotation.suggestion_shown) or exposed
    first_save = annotation is None
    if annotation is None:
        annotation = Annotation(
            project=project, item=item, annotator_id=annotator.pk, response_order=assignment.response_order
        )
    annotation.mode = project.mode
    annotation.binary_choice = choice
    annotation.likert_value = point
    annotation.suggestion_shown = shown
    annotation.accepted_suggestion = bool(accepted)
    annotation.time_spent_ms = min(annotation.time_spent_ms + spent, 2**31 - 1)
    annotation.revision_count += 1
    annotation.source = source
    annotation.save()

    by_position = {response.position: response for response in responses}
    by_name = {criterion.name: criterion for criterion in criteria}
    if not first_save:
        JudgmentValue.objects.filter(annotation=annotation).delete()
    JudgmentValue.objects.bulk_create(
        [
            JudgmentValue(annotation=annotation, response=by_position[p], criterion=by_name[n], mu=mu, nu=nu)
            for (p, n), (mu, nu) in sorted(cleaned.items())
        ]
    )
    AnnotationRevision.objects.create(
        annotation=annotation,
        number=annotation.revision_count,
        payload={
            "mode": project.mode,
            "values": [
                {"response": p, "criterion": n, "mu": mu, "nu": nu} for (p, n), (mu, nu) in sorted(cleaned.items())
            ],
            "binary_choice": choice,
            "likert_value": point,
            "response_order": annotation.response_order,
            "accepted": bool(accepted),
            "source": source,
        },
        suggestion_shown=shown,
        accepted_suggestion=bool(accepted),
        time_spent_ms=spent,
        client_token=token,
        reason=reason,
    )
    if reason == "resolution":  # a change on the resolution step; "Keep my label" is recorded by its own view
        ResolutionChoice.objects.create(project=project, item=item, annotator_id=annotator.pk, kept=False)
    if assignment.status != Assignment.Status.DONE:
        assignment.status = Assignment.Status.DONE
        assignment.expires_at = now
        assignment.save(update_fields=["status", "expires_at", "updated_at"])
    if assignment.open_request if hasattr(assignment, "open_request") else open_requests.exists():
        # The save answers the person's request for this item (one statement, only on request items).
        open_requests.update(
            status=LabelRequest.Status.ANSWERED,
            answered_at=now,
            final_preferred=judgment.preferred_of_judgment(
                project=project, criteria=criteria, cleaned=cleaned, choice=choice, point=point
            ),
        )
    next_request_item = getattr(assignment, "next_request_item", None)
    if (
        next_request_item is not None
        and next_request_item != item.pk
        and judgment.request_turn(
            seed=project.seed, annotator_id=int(annotator.pk), item_id=item.pk, share=REQUEST_SHARE
        )
    ):
        _request_serve(project=project, annotator=annotator, item_id=next_request_item, now=now)
    if first_save:
        Item.objects.filter(pk=item.pk).update(annotation_count=F("annotation_count") + 1)
        if project.labelling_started_at is None:
            project_mark_labelling_started(project_id=project.pk)
    events.labels_changed(project_id=project.pk, item_ids=[item.pk])
    return annotation


# The save in its own transaction; :func:`annotation_save_and_claim_next` runs the same body inside its own.
annotation_save = transaction.atomic(_annotation_save)


@transaction.atomic
def annotation_save_and_claim_next(
    *, project: Project, item: Item, annotator: AbstractBaseUser, claim_next: bool, **save: Any
) -> tuple[Annotation, Assignment | None]:
    """:func:`annotation_save`, then (with ``claim_next``) :func:`assignment_claim_next`, in one transaction: one
    BEGIN and one COMMIT for the page's save-and-next. A refused save claims nothing (the block rolls back whole).
    """
    annotation = _annotation_save(project=project, item=item, annotator=annotator, **save)
    if not claim_next:
        return annotation, None
    return annotation, _claim_next(project=project, annotator=annotator, exclude_item_ids=(), in_transaction=True)


@transaction.atomic
def assignment_skip(*, project: Project, item: Item, annotator: AbstractBaseUser, reason: str) -> Assignment:
    """Skip an item with a reason; it is not offered to this annotator again and frees the slot for others."""
    check_annotator_of(project=project, item=item, annotator=annotator)
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"skip_reason": "Say why you skip this item (it helps the lead fix bad items)."})
    if len(reason) > SKIP_REASON_MAX:
        raise ValidationError({"skip_reason": f"Keep the reason under {SKIP_REASON_MAX} characters."})
    assignment = _lock(Assignment.objects.filter(item=item, annotator_id=annotator.pk), skip_locked=False).first()
    if assignment is None:
        raise ValidationError({"__all__": "Open the item before skipping it."})
    if Annotation.objects.filter(item=item, annotator_id=annotator.pk).exists():
        raise ValidationError({"__all__": "You already labelled this item; change your label instead of skipping."})
    now = timezone.now()
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
    *, project: Project, item: Item, annotator: AbstractBaseUser, kind: str, visible: Suggestion | None = None
) -> SuggestionExposure:
    """Record that the suggestion of ``item`` was shown to ``annotator``; refused where it may not be shown.

    ``visible``: the suggestion that ``suggestion_visible_for`` has just returned for this item, annotator and the
    kind's purpose in the same request (the page's render), so the decision is not read twice.
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
    return SuggestionExposure.objects.create(project=project, item=item, annotator_id=annotator.pk, kind=kind)
