"""Writes of the annotator's work: saves (with revisions), skips and suggestion exposures.

Independent of HTTP: the page and the REST API call the same functions. Every function validates everything first
(annotation.checks) and writes nothing when it refuses, raising ValidationError with field-level messages. Claims
and the queue are in annotation.queue.services (re-exported here for callers of the older names).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, QuerySet, Subquery
from django.utils import timezone

from annotation import compiled_sql, judgment
from annotation.checks import (
    check_annotator,
    check_annotator_of,
    check_client_token,
    check_ifs_values,
    check_judgment,
    check_served,
    check_skip_reason,
    value_error_key,
    whole_number,
)
from annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    JudgmentValue,
    LabelRequest,
    ResolutionChoice,
    SuggestionExposure,
)
from annotation.queue import services as claim_services
from annotation.queue.services import (
    assignment_claim_item,
    assignment_claim_next,
    assignment_new,
    has_room,
    lock_rows,
    request_serve,
)
from annotation.request_selectors import requests_to_serve
from annotation.selectors import PURPOSE_ACCEPT, PURPOSE_PAGE, PURPOSE_RESOLUTION, suggestion_visible_for
from annotation.studies import selectors as crossover_selectors
from config import events
from config.bulk import RowUpdate, insert_together
from projects.models import Item, Project, Suggestion
from projects.selectors import item_responses, project_criteria
from projects.services import project_mark_labelling_started

__all__ = [
    "annotation_save",
    "annotation_save_and_claim_next",
    "assignment_claim_item",
    "assignment_claim_next",
    "assignment_skip",
    "check_annotator",
    "check_annotator_of",
    "check_client_token",
    "check_ifs_values",
    "check_judgment",
    "exposure_record",
    "value_error_key",
]

# One save never adds more than an hour: a tab left open overnight is not an hour of work.
MAX_TIME_PER_SAVE_MS = 60 * 60 * 1000
# Slack between the server's claim time and the client's clock start (page render, network).
CLAIM_TIME_SLACK_MS = 60 * 1000
REVISION_REASONS = ("save", "resolution", "api", "import")
SOURCES = ("page", "api", "import")
#: About one saved item in four is followed by one of the person's open label requests (when they have one), so the
#: requests come mixed among ordinary items and look like them; the rest are served when nothing else is left.
REQUEST_SHARE = 0.25


def _clamp_time(*, time_spent_ms: Any, assignment: Assignment | None, now: datetime) -> int:
    spent = whole_number(time_spent_ms) or 0
    ceiling = MAX_TIME_PER_SAVE_MS
    if assignment is not None and assignment.status == Assignment.Status.CLAIMED:
        # Not more than the time since the server handed out the item (plus slack for the client's clock).
        elapsed = int((now - assignment.claimed_at).total_seconds() * 1000) + CLAIM_TIME_SLACK_MS
        ceiling = min(ceiling, max(0, elapsed))
    return max(0, min(spent, ceiling))


class _Saved(NamedTuple):
    annotation: Annotation
    # The label request item the save put in the person's queue, if it did (their next item).
    served: Assignment | None = None
    # Whether, under the save's lock, the person held no live claim on another item of the project (so the next
    # claim need not look for one).
    no_other_claim: bool = False


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
) -> _Saved:
    """Save this annotator's judgment of ``item`` and append a revision; return the annotation.

    ``values``: for IFS projects, one mapping per response × criterion:
    ``{"response": <stored position>, "criterion": <criterion name>, "mu": <0..1000>, "nu": <0..1000>}``.
    ``binary_choice``: stored position or -1 (tie). ``likert_value``: 1..k, 1 = position 0 strongly preferred.
    The same ``client_token`` twice (double click, retry) is one revision: the second call returns the annotation
    unchanged. Needs a live claim, an existing annotation to edit, or room left on the item.
    """
    check_annotator_of(project=project, item=item, annotator=annotator)
    check_served(project=project, item_id=item.pk, annotator_id=int(annotator.pk))
    # A method study serves its plan in order; label requests wait until the person's share is done.
    in_method_study = project.mode == Project.Mode.CROSSOVER
    project = crossover_selectors.project_as_assigned(project=project, item=item, annotator=annotator)
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
    # The assignment row serialises saves of one annotator × item (double clicks, retries, two tabs). Whether the
    # suggestion was shown (or accepted), whether a label exists and whether the person holds another claim come with
    # the locked row, in one statement.
    named = {"item_id": item.pk, "annotator_id": int(annotator.pk), "project_id": project.pk, "now": now}
    assignment = _own_assignment_locked(named)
    if assignment is None:
        # No row to serialise on yet (an API save without a claim): the item row does it, then look again, so two
        # simultaneous first saves do not both create the assignment.
        lock_rows(Item.objects.filter(pk=item.pk), skip_locked=False).values("pk").first()
        assignment = _own_assignment_locked(named)
    # A first save (the common case) needs no read of the annotation: the locked row said there is none.
    labelled = assignment is None or bool(assignment.labelled)
    annotation = Annotation.objects.filter(item=item, annotator_id=annotator.pk).first() if labelled else None
    if annotation is not None and token is not None and annotation.revisions.filter(client_token=token).exists():
        return _Saved(annotation)
    if annotation is None:
        live_claim = (
            assignment is not None and assignment.status == Assignment.Status.CLAIMED and assignment.expires_at > now
        )
        requested = (
            bool(assignment.open_request)
            if assignment is not None
            else _open_requests(item=item, annotator=annotator).exists()
        )
        if (
            not live_claim
            and not requested
            and not has_room(project=project, item=item, annotator_id=int(annotator.pk), now=now)
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
        exposures = SuggestionExposure.objects.filter(item=item, annotator_id=annotator.pk)
        exposed = exposures.exists()
        accept_exposed = exposed and exposures.filter(kind=SuggestionExposure.Kind.ACCEPT).exists()
    if accepted and not accept_exposed:
        raise ValidationError({"accepted": "No suggestion was accepted for this item."})

    # Checks done: from here on, write.
    no_other_claim = assignment is not None and not assignment.other_claim
    if assignment is None:
        assignment = assignment_new(project=project, item=item, annotator=annotator, now=now)
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

    by_position = {response.position: response for response in responses}
    by_name = {criterion.name: criterion for criterion in criteria}
    judgment_values = [
        JudgmentValue(response=by_position[p], criterion=by_name[n], mu=mu, nu=nu)
        for (p, n), (mu, nu) in sorted(cleaned.items())
    ]
    revision = AnnotationRevision(
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
    finish = assignment.status != Assignment.Status.DONE
    if finish:
        assignment.status = Assignment.Status.DONE
        assignment.expires_at = now
        assignment.updated_at = timezone.now()
    if first_save:
        # The label, its values, its revision, the claim done and the item's count: one statement.
        updates = [RowUpdate(model=Item, pk=item.pk, increments={"annotation_count": 1})]
        if finish:
            updates.append(
                RowUpdate(
                    model=Assignment,
                    pk=assignment.pk,
                    values={"status": assignment.status, "expires_at": now, "updated_at": assignment.updated_at},
                )
            )
        insert_together(
            annotation, children=[("annotation", judgment_values), ("annotation", [revision])], updates=updates
        )
        item.annotation_count += 1
    else:
        annotation.save()
        JudgmentValue.objects.filter(annotation=annotation).delete()
        for value in judgment_values:
            value.annotation = annotation
        JudgmentValue.objects.bulk_create(judgment_values)
        revision.annotation = annotation
        revision.save()
        if reason == "resolution":  # a change on the resolution step; "Keep my label" is recorded by its own view
            ResolutionChoice.objects.create(project=project, item=item, annotator_id=annotator.pk, kept=False)
        if finish:
            assignment.save(update_fields=["status", "expires_at", "updated_at"])
    open_requests = _open_requests(item=item, annotator=annotator)
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
    served = None
    if (
        next_request_item is not None
        and next_request_item != item.pk
        and not in_method_study
        and judgment.request_turn(
            seed=project.seed, annotator_id=int(annotator.pk), item_id=item.pk, share=REQUEST_SHARE
        )
    ):
        served = request_serve(project=project, annotator=annotator, item_id=next_request_item, now=now)
    if first_save and project.labelling_started_at is None:
        project_mark_labelling_started(project_id=project.pk)
    events.labels_changed(project_id=project.pk, item_ids=[item.pk])
    return _Saved(annotation, served=served, no_other_claim=no_other_claim)


def _open_requests(*, item: Item, annotator: AbstractBaseUser) -> QuerySet[LabelRequest]:
    return LabelRequest.objects.filter(item=item, annotator_id=annotator.pk, status=LabelRequest.Status.OPEN)


def _own_assignment_locked(named: Mapping[str, Any]) -> Any:  # Assignment | None, with its annotations
    """The annotator's assignment of the item, row-locked, with what the save needs to know beside it; on PostgreSQL
    through SQL compiled once per process (the same statement)."""
    if compiled_sql.enabled():
        return compiled_sql.first_row(Assignment, ("own assignment",), _own_assignment_query, named)
    return _own_assignment_query(named).first()


def _own_assignment_query(named: Mapping[str, Any]) -> QuerySet[Assignment]:
    item_id, annotator_id, now = named["item_id"], named["annotator_id"], named["now"]
    exposures = SuggestionExposure.objects.filter(item_id=item_id, annotator_id=annotator_id)
    open_requests = LabelRequest.objects.filter(
        item_id=item_id, annotator_id=annotator_id, status=LabelRequest.Status.OPEN
    )
    other_claims = Assignment.objects.filter(
        project_id=named["project_id"], annotator_id=annotator_id, status=Assignment.Status.CLAIMED, expires_at__gt=now
    ).exclude(item_id=item_id)
    # An unsaved project of that id: the requests are filtered by its key only.
    requests = requests_to_serve(project=Project(pk=named["project_id"]), annotator_id=annotator_id)
    return lock_rows(
        Assignment.objects.filter(item_id=item_id, annotator_id=annotator_id).annotate(
            exposed=Exists(exposures),
            accept_exposed=Exists(exposures.filter(kind=SuggestionExposure.Kind.ACCEPT)),
            labelled=Exists(Annotation.objects.filter(item_id=item_id, annotator_id=annotator_id)),
            open_request=Exists(open_requests),
            other_claim=Exists(other_claims),
            next_request_item=Subquery(requests[:1]),
        ),
        skip_locked=False,
    )


@transaction.atomic
def annotation_save(*, project: Project, item: Item, annotator: AbstractBaseUser, **save: Any) -> Annotation:
    """The save in its own transaction (its arguments and checks: :func:`_annotation_save`);
    :func:`annotation_save_and_claim_next` runs the same body inside its own."""
    return _annotation_save(project=project, item=item, annotator=annotator, **save).annotation


@transaction.atomic
def annotation_save_and_claim_next(
    *, project: Project, item: Item, annotator: AbstractBaseUser, claim_next: bool, **save: Any
) -> tuple[Annotation, Assignment | None]:
    """:func:`annotation_save`, then (with ``claim_next``) :func:`assignment_claim_next`, in one transaction: one
    BEGIN and one COMMIT for the page's save-and-next. A refused save claims nothing (the block rolls back whole).
    """
    saved = _annotation_save(project=project, item=item, annotator=annotator, **save)
    if not claim_next:
        return saved.annotation, None
    if saved.served is not None:
        return saved.annotation, saved.served  # the label request the save put first in the queue
    claimed = claim_services.claim_next(
        project=project,
        annotator=annotator,
        exclude_item_ids=(),
        in_transaction=True,
        own_claim_absent=saved.no_other_claim,
    )
    return saved.annotation, claimed


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
        clock = _clamp_time(time_spent_ms=time_on_item_ms, assignment=held, now=timezone.now())
    return SuggestionExposure.objects.create(
        project=project, item=item, annotator_id=annotator.pk, kind=kind, time_on_item_ms=clock
    )
