"""Reads for the annotator: their own annotations, whether a suggestion may be shown, others' live claims.
The page's context is in annotation.page.selectors, the home's counts in annotation.page.home.

Every function takes a project the caller reached through projects.selectors (membership checked) and only ever
returns the calling annotator's own rows: annotators never read other annotators' labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import (
    Count,
    Exists,
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

from annotation import judgment
from annotation.models import Annotation, Assignment, JudgmentValue, Repeat, SuggestionExposure
from annotation.requests import requests_verifying, requests_withholding
from config import compiled_sql
from projects import preference
from projects.models import TIE, Criterion, Item, Membership, Project, Response, Suggestion, SuggestionValue
from projects.selectors import project_get_for_user, project_role_for

AnyUser = AbstractBaseUser | AnonymousUser

# --- suggestions ------------------------------------------------------------------------------------------------

PURPOSE_PAGE = "page"  # shown with the item, before or while labelling
PURPOSE_ACCEPT = "accept"  # the Accept button
PURPOSE_RESOLUTION = "resolution"  # the after-label resolution step


def suggestion_visible_for(
    *,
    project: Project,
    item: Item,
    annotator: AnyUser,
    purpose: str = PURPOSE_PAGE,
    has_saved: bool | None = None,
    with_values: bool = True,
) -> Suggestion | None:
    """The one decision whether this annotator may see this item's suggestion now; None means show nothing.

    - Only suggestions with status "ok" are ever shown (a failed generation is not a label).
    - blind_sample: never for a blind item, whatever the purpose, before or after a save (a blind item stays blind
      for its annotators); other items behave as before_label.
    - before_label: with the item and through Accept; there is no resolution step.
    - after_label: never before the annotator's own save; afterwards only on the resolution step, and never for an
      item of the random blind sample.
    - A calibration, certification or audit request (``LabelRequest``) held or answered by this annotator for this
      item withholds it for every purpose, in every display mode: their label is blind evidence about the model.
      Folded into the one suggestion query, so the check costs no statement. With ``verify_visibility: blind`` a
      verification request withholds it the same way (its answer is then a blind label like any other).
    """
    if item.project_id != project.pk:
        return None
    display = project.suggestion_display
    # An item of the random blind sample is never shown, not even at the after-label resolution step: a label that
    # changes there would still be the blind comparison, but the person would have seen the model.
    if item.is_blind and display in (Project.SuggestionDisplay.BLIND_SAMPLE, Project.SuggestionDisplay.AFTER_LABEL):
        return None
    if display == Project.SuggestionDisplay.AFTER_LABEL:
        if purpose != PURPOSE_RESOLUTION:
            return None
        if has_saved is None:
            has_saved = Annotation.objects.filter(item=item, annotator_id=annotator.pk).exists()
        if not has_saved:
            return None
    elif purpose == PURPOSE_RESOLUTION:
        return None
    blind_verify = project.verify_visibility == Project.VerifyVisibility.BLIND

    def visible(named: Mapping[str, Any]) -> QuerySet[Suggestion]:
        # ``project`` only chooses the withheld kinds here, and that choice is part of the compiled query's key.
        held_blind = requests_withholding(project=project, annotator_id=named["annotator_id"])
        # ``verifying``: the person holds an open verification request for the item (the page pre-fills its answer).
        verifying = requests_verifying(annotator_id=named["annotator_id"])
        return (
            Suggestion.objects.filter(item_id=named["item_id"], status=Suggestion.Status.OK)
            .exclude(Exists(held_blind))
            .annotate(verifying=Exists(verifying))
        )

    named: dict[str, Any] = {"item_id": item.pk, "annotator_id": annotator.pk}
    if compiled_sql.enabled() and annotator.pk is not None:
        suggestion = compiled_sql.first_row(Suggestion, ("visible suggestion", blind_verify), visible, named)
    else:
        suggestion = visible(named).first()
    if suggestion is not None and with_values:
        prefetch_related_objects(
            [suggestion], Prefetch("values", queryset=SuggestionValue.objects.select_related("response"))
        )
    return suggestion


def suggestion_prefilled_values(
    *, suggestion: Suggestion, responses: list[Response], criteria: list[Criterion]
) -> dict[tuple[int, int], tuple[int, int]]:
    """(μ, ν) per (stored position, criterion id) that Accept puts on the sliders.

    The suggestion's own (μ, ν) when it has them for a response (the same for every criterion: a suggestion is one
    judgment per response), otherwise the documented defaults in annotation.judgment.
    """
    own = {value.response.position: (value.mu, value.nu) for value in suggestion.values.all()}
    filled: dict[tuple[int, int], tuple[int, int]] = {}
    for response in responses:
        if response.position in own:
            pair = own[response.position]
        elif suggestion.preferred_position == TIE:
            pair = judgment.ACCEPT_DEFAULT_TIE
        elif response.position == suggestion.preferred_position:
            pair = judgment.ACCEPT_DEFAULT_PREFERRED
        else:
            pair = judgment.ACCEPT_DEFAULT_OTHER
        for criterion in criteria:
            filled[(response.position, criterion.pk)] = pair
    return filled


# --- claims -----------------------------------------------------------------------------------------------------


def live_claims_by_others(*, annotator_id: int, now: datetime) -> Coalesce:
    """An item's live claims held by anyone but this annotator (an expression on an Item queryset)."""
    claims = (
        Assignment.objects.filter(item=OuterRef("pk"), status=Assignment.Status.CLAIMED, expires_at__gt=now)
        .exclude(annotator_id=annotator_id)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(claims, output_field=IntegerField()), Value(0))


# --- own annotations --------------------------------------------------------------------------------------------


def annotation_get_own(*, project: Project, item: Item, annotator: AnyUser) -> Annotation | None:
    return (
        Annotation.objects.filter(project=project, item=item, annotator_id=annotator.pk)
        .prefetch_related("values")
        .first()
    )


def assignment_get_own(*, project: Project, item: Item, annotator: AnyUser) -> Assignment | None:
    return Assignment.objects.filter(project=project, item=item, annotator_id=annotator.pk).first()


def annotation_payload_preferred(*, project: Project, annotation: Annotation, criteria: list[Criterion]) -> int:
    """The stored position this saved judgment prefers (TIE for none), in the project's mode."""
    rows: list[tuple[int, float, int, int]] = []
    if annotation.mode == Project.Mode.IFS:
        weights = {criterion.pk: criterion.weight for criterion in criteria}
        response_positions = dict(Response.objects.filter(item_id=annotation.item_id).values_list("id", "position"))
        rows = [
            (response_positions[v.response_id], weights.get(v.criterion_id, 0.0), v.mu, v.nu)
            for v in annotation.values.all()
        ]
    return preference.preferred_position(
        mode=str(annotation.mode),
        choice=annotation.binary_choice,
        likert_value=annotation.likert_value,
        likert_points=project.likert_points,
        values=rows,
        tie_tolerance=project.tie_tolerance,
    )


def annotation_disagrees_with_suggestion(
    *, project: Project, annotation: Annotation, suggestion: Suggestion, criteria: list[Criterion]
) -> bool:
    own = annotation_payload_preferred(project=project, annotation=annotation, criteria=criteria)
    return own != suggestion.preferred_position


def resolution_needed(*, project: Project, item: Item, annotator: AnyUser) -> bool:
    """After-label mode: whether this annotator's saved label disagrees with the LLM, so the step is shown."""
    suggestion = suggestion_visible_for(project=project, item=item, annotator=annotator, purpose=PURPOSE_RESOLUTION)
    if suggestion is None:
        return False
    annotation = annotation_get_own(project=project, item=item, annotator=annotator)
    if annotation is None:
        return False
    criteria = list(project.criteria.all())
    return annotation_disagrees_with_suggestion(
        project=project, annotation=annotation, suggestion=suggestion, criteria=criteria
    )


def annotation_previous(*, project: Project, annotator: AnyUser, before_item_id: int | None) -> Item | None:
    """The item this annotator labelled or skipped just before ``before_item_id`` (in the order first claimed)."""
    history = Assignment.objects.filter(
        project=project, annotator_id=annotator.pk, status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED]
    )
    if before_item_id is not None:
        current = Assignment.objects.filter(project=project, annotator_id=annotator.pk, item_id=before_item_id).first()
        if current is not None:
            history = history.filter(pk__lt=current.pk)
    previous = history.order_by("-pk").select_related("item").first()
    return previous.item if previous else None


DONE_LIST_LIMIT = 500


def done_items_for(*, project: Project, annotator: AnyUser) -> list[dict[str, Any]]:
    """This annotator's labelled and skipped items of the project, latest first (the order ``P`` walks back), at
    most :data:`DONE_LIST_LIMIT`: item id, external id, status, when. The caller reached the project as its
    annotator (``project_get_for_annotator``): only their own rows are read."""
    rows = (
        Assignment.objects.filter(
            project=project, annotator_id=annotator.pk, status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED]
        )
        .order_by("-pk")
        .values("item_id", "item__external_id", "status", "updated_at")[:DONE_LIST_LIMIT]
    )
    return [dict(row) for row in rows]


def exposures_for(*, project: Project, item: Item, annotator: AnyUser) -> list[SuggestionExposure]:
    return list(SuggestionExposure.objects.filter(project=project, item=item, annotator_id=annotator.pk))


def annotation_created_by_save(*, annotation: Annotation, client_token: str | None) -> bool:
    """Whether the save that returned ``annotation`` is the one that created it (the API's 201 against 200).

    Asked after annotation_save, never before: saves of one annotator × item are serialised inside the service,
    so a check made before it races with a concurrent first save. With a client token, the save that created the
    label and every replay of it (the same token: a retry, a double click) answer alike, because revision 1 carries
    that token. Without one, the creating save is the one that wrote revision 1; annotation_save hands back the
    instance it wrote, so its revision count is this save's own.
    """
    if client_token:
        return annotation.revisions.filter(number=1, client_token=client_token).exists()
    return annotation.revision_count == 1


# --- what the REST API lists -------------------------------------------------------------------------------------


def annotations_visible_to(
    *, user: AnyUser, project_id: int, item_id: int | None = None, annotator_username: str = ""
) -> QuerySet[Annotation]:
    """The labels of a project the user may read through the API: a lead every label, anyone else only their own
    (outsiders get Http404); of one item or one annotator when given. With items, annotators and values in the order
    the API lists them."""
    project = project_get_for_user(user=user, project_id=project_id)
    annotations = Annotation.objects.filter(project=project)
    if project_role_for(user=user, project=project) != Membership.Role.LEAD:
        annotations = annotations.filter(annotator_id=user.pk)
    if item_id is not None:
        annotations = annotations.filter(item_id=item_id)
    if annotator_username:
        # An imported annotator is named as its file named it (its shadow user's username is an internal detail).
        annotations = annotations.filter(
            Q(annotator__username=annotator_username) | Q(annotator__imported_identity__external_id=annotator_username)
        )
    return annotations.select_related("item", "annotator", "annotator__imported_identity").prefetch_related(
        Prefetch(
            "values",
            queryset=JudgmentValue.objects.select_related("response", "criterion").order_by(
                "response__position", "criterion__position"
            ),
        )
    )


def annotation_item_id_own(*, user: AnyUser, project: Project, annotation_id: int) -> int | None:
    """The item of one of the user's own labels in a project they reached through projects.selectors; None when the
    label is not theirs (an API edit may only replace one's own label)."""
    return (
        Annotation.objects.filter(pk=annotation_id, project=project, annotator_id=user.pk)
        .values_list("item_id", flat=True)
        .first()
    )


def repeat_open_for(*, project: Project, item: Item, annotator: Any) -> Repeat | None:
    """The person's served, unanswered repeat of ``item``, or None. No statement when the project has no repeats:
    the page and the save of a plain project keep their budgets. A repeat served before the lead set the rate to 0
    is then left unanswered (the earlier judgment shows as usual)."""
    if project.repeat_rate <= 0:
        return None
    return Repeat.objects.filter(
        project=project, item=item, annotator_id=annotator.pk, answered_at__isnull=True
    ).first()
