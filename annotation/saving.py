"""The save's three steps, after Zulip's check_*/do_*: :func:`save_check` refuses (ValidationError) before anything
is written, :func:`save_plan` says what will be written (a :class:`SavePlan`, new label or revision), and
:func:`save_write` writes it. ``annotation.services.annotation_save`` runs them in one transaction and then asks
``annotation.queue.services.next_item_decide`` what comes next; the HTTP layer hands the post over as a
:class:`SaveRequest`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db.models import Exists, QuerySet, Subquery
from django.utils import timezone

from annotation import judgment
from annotation.checks import (
    check_annotator_of,
    check_both_bad,
    check_client_token,
    check_judgment,
    check_ranking,
    check_served,
    whole_number,
)
from annotation.claims import assignment_new
from annotation.method_study import selectors as crossover_selectors
from annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    JudgmentValue,
    LabelRequest,
    ResolutionChoice,
    SuggestionExposure,
)
from annotation.queue.services import AfterSave, has_room, lock_rows
from annotation.requests import requests_to_serve
from config import compiled_sql
from config.bulk import RowUpdate, insert_together
from projects.models import TIE, Criterion, Item, Project, Response
from projects.selectors import item_responses, project_criteria

# One save never adds more than an hour: a tab left open overnight is not an hour of work.
MAX_TIME_PER_SAVE_MS = 60 * 60 * 1000
# Slack between the server's claim time and the client's clock start (page render, network).
CLAIM_TIME_SLACK_MS = 60 * 1000
REVISION_REASONS = ("save", "resolution", "api", "import")
SOURCES = ("page", "api", "import")


@dataclass(frozen=True, slots=True)
class SaveRequest:
    """One save as the HTTP layer (the page's form, the API's serializer) received it, not yet checked: anything
    that is not the expected shape is passed on as given, so :func:`save_check` names the problem.

    ``values``: for IFS projects, one mapping per response × criterion:
    ``{"response": <stored position>, "criterion": <criterion name>, "mu": <0..1000>, "nu": <0..1000>}``.
    ``binary_choice``: stored position or -1 (tie). ``ranking`` (binary, three responses or more): stored positions
    best first, its head the choice. ``both_bad`` (binary, two responses): a tie that says neither is good.
    ``likert_value``: 1..k, 1 = position 0 strongly preferred.
    The same ``client_token`` twice (double click, retry) is one revision. ``accepted``: the shown suggestion was
    accepted. ``reason``: one of :data:`REVISION_REASONS`; ``source``: one of :data:`SOURCES`.
    """

    values: Sequence[Mapping[str, Any]] | None = None
    binary_choice: int | str | None = None
    likert_value: int | str | None = None
    ranking: Sequence[Any] | None = None
    both_bad: bool = False
    client_token: str | None = None
    time_spent_ms: int | str = 0
    accepted: bool = False
    reason: str = "save"
    source: str = "page"


@dataclass(frozen=True, slots=True)
class Checked:
    """A save that passed the checks that need no lock."""

    project: Project  # as the annotator judges the item (a method study's cell method)
    method_study: bool
    token: str | None
    responses: list[Response]
    criteria: list[Criterion]
    cleaned: dict[tuple[int, str], tuple[int, int]]
    choice: int | None
    point: int | None
    ranking: list[int] | None = None
    both_bad: bool = False


@dataclass(frozen=True, slots=True)
class Locked:
    """What the save read under the lock of the annotator × item: their assignment (None: none yet), their label
    (None: a first save) and what was read beside them in the same statement."""

    assignment: Assignment | None
    annotation: Annotation | None
    exposed: bool
    accept_exposed: bool
    open_request: bool
    other_claim: bool
    request_item_id: int | None


@dataclass(frozen=True, slots=True)
class SavePlan:
    """What :func:`save_write` writes: a new label (``first``) or a revision of ``locked.annotation``."""

    checked: Checked
    locked: Locked
    save: SaveRequest
    now: datetime
    first: bool
    shown: bool  # the suggestion was shown before this label (now or at an earlier revision)
    spent: int  # milliseconds this save adds
    finish: bool  # the assignment becomes done
    resolution_change: bool  # a change on the after-label resolution step (recorded as a ResolutionChoice)

    def after_save(self, item: Item) -> AfterSave:
        return AfterSave(
            item_id=item.pk,
            request_item_id=self.locked.request_item_id,
            own_claim_absent=self.locked.assignment is not None and not self.locked.other_claim,
            method_study=self.checked.method_study,
        )


def clamp_time(*, time_spent_ms: Any, claimed_at: datetime | None, now: datetime) -> int:
    """``time_spent_ms`` within the ceiling; ``claimed_at``: when the live claim was handed out, if there is one."""
    spent = whole_number(time_spent_ms) or 0
    ceiling = MAX_TIME_PER_SAVE_MS
    if claimed_at is not None:
        # Not more than the time since the server handed out the item (plus slack for the client's clock).
        elapsed = int((now - claimed_at).total_seconds() * 1000) + CLAIM_TIME_SLACK_MS
        ceiling = min(ceiling, max(0, elapsed))
    return max(0, min(spent, ceiling))


def save_check(*, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest) -> Checked:
    """The checks that need no lock: membership, the phase, the method study's plan, the fields and the judgment."""
    check_annotator_of(project=project, item=item, annotator=annotator)
    check_served(project=project, item_id=item.pk, annotator_id=int(annotator.pk))
    method_study = project.mode == Project.Mode.CROSSOVER
    project = crossover_selectors.project_as_assigned(project=project, item=item, annotator=annotator)
    if save.reason not in REVISION_REASONS:
        raise ValidationError({"reason": f"Expected one of {', '.join(REVISION_REASONS)}."})
    if save.source not in SOURCES:
        raise ValidationError({"source": f"Expected one of {', '.join(SOURCES)}."})
    token = check_client_token(save.client_token)
    responses, criteria = item_responses(item), project_criteria(project)
    both_bad = check_both_bad(
        project=project, responses=responses, both_bad=save.both_bad, binary_choice=save.binary_choice
    )
    binary_choice = TIE if both_bad else save.binary_choice
    if save.ranking and binary_choice in (None, "") and save.ranking[0] is not None:
        binary_choice = save.ranking[0]  # a ranking alone says which response is best
    cleaned, choice, point = check_judgment(
        project=project,
        responses=responses,
        criteria=criteria,
        values=save.values,
        binary_choice=binary_choice,
        likert_value=save.likert_value,
    )
    ranking = check_ranking(project=project, responses=responses, ranking=save.ranking, choice=choice)
    return Checked(project, method_study, token, responses, criteria, cleaned, choice, point, ranking, both_bad)


def save_lock(*, project: Project, item: Item, annotator: AbstractBaseUser, now: datetime) -> Locked:
    """Lock the annotator × item and read what the save decides on.

    The assignment row serialises saves of one annotator × item (double clicks, retries, two tabs). Whether the
    suggestion was shown (or accepted), whether a label exists and whether the person holds another claim come with
    the locked row, in one statement.
    """
    named = {"item_id": item.pk, "annotator_id": int(annotator.pk), "project_id": project.pk, "now": now}
    row = _own_assignment_locked(named)
    if row is None:
        # No row to serialise on yet (an API save without a claim): the item row does it, then look again, so two
        # simultaneous first saves do not both create the assignment.
        lock_rows(Item.objects.filter(pk=item.pk), skip_locked=False).values("pk").first()
        row = _own_assignment_locked(named)
    # A first save (the common case) needs no read of the annotation: the locked row said there is none.
    labelled = row is None or bool(row.labelled)
    annotation = Annotation.objects.filter(item=item, annotator_id=annotator.pk).first() if labelled else None
    if row is not None:
        return Locked(
            assignment=row,
            annotation=annotation,
            exposed=bool(row.exposed),
            accept_exposed=bool(row.accept_exposed),
            open_request=bool(row.open_request),
            other_claim=bool(row.other_claim),
            request_item_id=row.next_request_item,
        )
    exposures = SuggestionExposure.objects.filter(item=item, annotator_id=annotator.pk)
    exposed = exposures.exists()
    return Locked(
        assignment=None,
        annotation=annotation,
        exposed=exposed,
        accept_exposed=exposed and exposures.filter(kind=SuggestionExposure.Kind.ACCEPT).exists(),
        open_request=_open_requests(item=item, annotator=annotator).exists(),
        other_claim=True,  # not looked at: the next decision looks for their claim itself
        request_item_id=None,
    )


def save_repeated(*, locked: Locked, checked: Checked) -> bool:
    """Whether this save's token already made a revision (a double click, a retry): then nothing is written."""
    annotation, token = locked.annotation, checked.token
    return annotation is not None and token is not None and annotation.revisions.filter(client_token=token).exists()


def save_plan(
    *, item: Item, annotator: AbstractBaseUser, save: SaveRequest, checked: Checked, locked: Locked, now: datetime
) -> SavePlan:
    """The checks under the lock (room, the resolution step, Accept), then what to write."""
    project, assignment, annotation = checked.project, locked.assignment, locked.annotation
    if annotation is None:
        live_claim = (
            assignment is not None and assignment.status == Assignment.Status.CLAIMED and assignment.expires_at > now
        )
        if (
            not live_claim
            and not locked.open_request
            and not has_room(project=project, item=item, annotator_id=int(annotator.pk), now=now)
        ):
            raise ValidationError(
                {
                    "__all__": "Your claim on this item expired and it now has all the labels it needs. Nothing was "
                    "saved; take the next item."
                }
            )
    elif save.reason == "resolution" and project.suggestion_display != Project.SuggestionDisplay.AFTER_LABEL:
        raise ValidationError({"reason": "Only after-label projects have a resolution step."})
    if save.reason == "resolution" and annotation is None:
        raise ValidationError({"reason": "A resolution changes a saved label; there is none yet."})
    if save.accepted and not locked.accept_exposed:
        raise ValidationError({"accepted": "No suggestion was accepted for this item."})
    # A new assignment is a live claim handed out now.
    live = assignment is None or assignment.status == Assignment.Status.CLAIMED
    claimed_at = now if assignment is None else assignment.claimed_at
    return SavePlan(
        checked=checked,
        locked=locked,
        save=save,
        now=now,
        first=annotation is None,
        shown=(annotation is not None and annotation.suggestion_shown) or locked.exposed,
        spent=clamp_time(time_spent_ms=save.time_spent_ms, claimed_at=claimed_at if live else None, now=now),
        finish=assignment is None or assignment.status != Assignment.Status.DONE,
        resolution_change=annotation is not None and save.reason == "resolution",
    )


def save_write(*, plan: SavePlan, item: Item, annotator: AbstractBaseUser) -> Annotation:
    """Write the plan: the label (new or revised), its values, its revision, the assignment done, the item's count
    and the answered label request."""
    project, now, save = plan.checked.project, plan.now, plan.save
    assignment = plan.locked.assignment
    if assignment is None:
        assignment = assignment_new(project=project, item=item, annotator=annotator, now=now)
    annotation = plan.locked.annotation or Annotation(
        project=project, item=item, annotator_id=annotator.pk, response_order=assignment.response_order
    )
    annotation.mode = project.mode
    annotation.binary_choice = plan.checked.choice
    annotation.likert_value = plan.checked.point
    annotation.ranking = plan.checked.ranking
    annotation.both_bad = plan.checked.both_bad
    annotation.suggestion_shown = plan.shown
    annotation.accepted_suggestion = bool(save.accepted)
    annotation.time_spent_ms = min(annotation.time_spent_ms + plan.spent, 2**31 - 1)
    annotation.revision_count += 1
    annotation.source = save.source
    values, revision = _values_and_revision(plan=plan, annotation=annotation)
    if plan.finish:
        assignment.status = Assignment.Status.DONE
        assignment.expires_at = now
        assignment.updated_at = timezone.now()
    if plan.first:
        # The label, its values, its revision, the claim done and the item's count: one statement.
        updates = [RowUpdate(model=Item, pk=item.pk, increments={"annotation_count": 1})]
        if plan.finish:
            done = {"status": assignment.status, "expires_at": now, "updated_at": assignment.updated_at}
            updates.append(RowUpdate(model=Assignment, pk=assignment.pk, values=done))
        insert_together(annotation, children=[("annotation", values), ("annotation", [revision])], updates=updates)
        item.annotation_count += 1
    else:
        annotation.save()
        JudgmentValue.objects.filter(annotation=annotation).delete()
        for value in values:
            value.annotation = annotation
        JudgmentValue.objects.bulk_create(values)
        revision.annotation = annotation
        revision.save()
        if plan.resolution_change:  # "Keep my label" is recorded by its own view
            ResolutionChoice.objects.create(project=project, item=item, annotator_id=annotator.pk, kept=False)
        if plan.finish:
            assignment.save(update_fields=["status", "expires_at", "updated_at"])
    if plan.locked.open_request:
        # The save answers the person's request for this item (one statement, only on request items).
        checked = plan.checked
        _open_requests(item=item, annotator=annotator).update(
            status=LabelRequest.Status.ANSWERED,
            answered_at=now,
            final_preferred=judgment.preferred_of_judgment(
                project=project,
                criteria=checked.criteria,
                cleaned=checked.cleaned,
                choice=checked.choice,
                point=checked.point,
            ),
        )
    return annotation


def _values_and_revision(*, plan: SavePlan, annotation: Annotation) -> tuple[list[JudgmentValue], AnnotationRevision]:
    checked, save = plan.checked, plan.save
    by_position = {response.position: response for response in checked.responses}
    by_name = {criterion.name: criterion for criterion in checked.criteria}
    ordered = sorted(checked.cleaned.items())
    values = [
        JudgmentValue(response=by_position[p], criterion=by_name[n], mu=mu, nu=nu) for (p, n), (mu, nu) in ordered
    ]
    revision = AnnotationRevision(
        number=annotation.revision_count,
        payload={
            "mode": checked.project.mode,
            "values": [{"response": p, "criterion": n, "mu": mu, "nu": nu} for (p, n), (mu, nu) in ordered],
            "binary_choice": checked.choice,
            "likert_value": checked.point,
            "ranking": checked.ranking,
            "both_bad": checked.both_bad,
            "response_order": annotation.response_order,
            "accepted": bool(save.accepted),
            "source": save.source,
        },
        suggestion_shown=plan.shown,
        accepted_suggestion=bool(save.accepted),
        time_spent_ms=plan.spent,
        client_token=checked.token,
        reason=save.reason,
    )
    return values, revision


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
