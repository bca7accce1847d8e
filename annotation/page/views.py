"""The annotator's page. Thin: selectors read, services write; one view serves the page and its HTMX fragment."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from annotation import checks, selectors, services
from annotation.crowd import steps as study_steps
from annotation.crowd.gate import participant_open
from annotation.crowd.selectors import PARTICIPANT_SESSION_KEY
from annotation.method_study import selectors as crossover_selectors
from annotation.models import Assignment, SuggestionExposure
from annotation.page import resolution
from annotation.page import selectors as page_selectors
from annotation.page.forms import annotation_post_parse
from annotation.page.home import home_progress_for
from annotation.queue import services as claim_services
from annotation.repeats import services as repeat_services
from annotation.saving import SaveRequest
from config.input_limits import whole_number
from projects.models import Item, Project
from projects.selectors import (
    item_get_for_user,
    item_get_with_responses_for_user,
    item_responses,
    project_criteria,
    project_get_for_annotator,
)

ITEM_FULL = gettext_noop("This item already has all the labels it needs. Take the next item.")


class AnnotatorRequest(HttpRequest):
    """A request behind login_required and django-htmx's middleware."""

    htmx: HtmxDetails
    user: User


def _errors(error: ValidationError) -> dict[str, list[str]]:
    if hasattr(error, "error_dict"):
        return {field: [str(m) for m in messages] for field, messages in error.message_dict.items()}
    return {"__all__": [str(m) for m in error.messages]}


def _message(error: ValidationError) -> str:
    return " ".join(m for messages in _errors(error).values() for m in messages)


def _item_url(project: Project, item: Item, stage: str = "label") -> str:
    url = reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk})
    return f"{url}?stage=resolution" if stage == "resolution" else url


def _render_item(
    request: AnnotatorRequest,
    *,
    project: Project,
    item: Item,
    assignment: Assignment,
    stage: str = "label",
    posted: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    accept_values: bool = False,
    status: int = 200,
    notice: str = "",
    skip: dict[str, str] | None = None,
) -> HttpResponse:
    try:  # a method study's block decides the method the page shows
        assigned = crossover_selectors.project_as_assigned(project=project, item=item, annotator=request.user)
    except ValidationError as error:  # not theirs to label; not _next, which could hand back the same item
        return _render_done(request, project=project, notice=" ".join(_errors(error).get("__all__", [])))
    frame = page_selectors.annotation_page_context(
        unlabelled=claim_services.known_unlabelled(assignment),
        project=assigned,
        item=item,
        annotator=request.user,
        assignment=assignment,
        stage=stage,
        posted=posted,
        errors=errors,
        accept_values=accept_values,
    )
    # Every showing is recorded (Accept records its own, as kind "accept").
    # The model object stays out of the template: only the shown fields (context["suggestion"]) reach the page.
    visible, context = frame.suggestion_object, frame.context()
    if frame.suggestion is not None and not accept_values:
        kind = SuggestionExposure.Kind.RESOLUTION if stage == "resolution" else SuggestionExposure.Kind.BEFORE_LABEL
        services.exposure_record(project=project, item=item, annotator=request.user, kind=kind, visible=visible)
    progress = home_progress_for(project=project, annotator=request.user)
    study_block = crossover_selectors.block_banner(project=project, item=item, annotator=request.user)
    if study_block is not None:  # "item k of n" counts their share of the study, not the project's items
        progress.total = study_block.planned
    progress = study_steps.study_progress(request, project, progress)  # a participant's: against their quota
    context.update(
        client_token=uuid.uuid4().hex,
        notice=notice,
        item_url=_item_url(project, item),
        progress=progress,
        first_visit=progress.first_visit,
        just_accepted=accept_values,
        study_block=study_block,
        skip=skip or {},  # a refused skip: what was chosen and typed, shown again in the open panel
    )
    template = "annotation/partials/frame.html" if request.htmx else "annotation/page.html"
    response = render(request, template, context, status=200 if request.htmx else status)
    if request.htmx:
        response["HX-Push-Url"] = _item_url(project, item, stage)
    return response


def _render_done(request: AnnotatorRequest, *, project: Project, notice: str = "") -> HttpResponse:
    context = {
        "project": project,
        "notice": notice,
        "progress": home_progress_for(project=project, annotator=request.user),
    }
    template = "annotation/partials/queue_empty.html" if request.htmx else "annotation/queue_empty.html"
    response = render(request, template, context)
    if request.htmx:
        response["HX-Push-Url"] = reverse("annotate_next", kwargs={"project_id": project.pk})
    return response


def _next(request: AnnotatorRequest, project: Project, notice: str = "") -> HttpResponse:
    # A study participant's queue follows their link (quota, attention checks) and ends on the code page.
    step = study_steps.participant_step(request, project)
    if isinstance(step, HttpResponse):
        return step
    if step is not None:
        return _render_item(request, project=project, item=step.item, assignment=step, notice=notice)
    assignment = claim_services.assignment_claim_next(project=project, annotator=request.user)
    if assignment is None:
        return _render_done(request, project=project, notice=notice)
    return _render_item(request, project=project, item=assignment.item, assignment=assignment, notice=notice)


@participant_open
@login_required
@require_GET
def annotate_next(request: AnnotatorRequest, project_id: int) -> HttpResponse:
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    return _next(request, project)


@participant_open
@login_required
@require_http_methods(["GET", "POST"])
def annotate_item(request: AnnotatorRequest, project_id: int, item_id: int) -> HttpResponse:  # noqa: C901
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    item = item_get_with_responses_for_user(user=request.user, project=project, item_id=item_id)
    try:
        assigned = crossover_selectors.project_as_assigned(project=project, item=item, annotator=request.user)
    except ValidationError as error:
        return _next(request, project, notice=" ".join(_errors(error).get("__all__", [])))
    if request.method == "GET":
        # Opening an item claims nothing (a GET writes no claim): its save takes the slot, or refuses if the item
        # filled up meanwhile.
        shown = page_selectors.assignment_for_page(project=project, item=item, annotator=request.user)
        if shown is None:
            return _next(request, project, notice=gettext(ITEM_FULL))
        if shown.status != Assignment.Status.DONE:  # their own done items stay readable after a handoff
            try:
                checks.check_served(project=project, item_id=item.pk, annotator_id=request.user.pk)
            except ValidationError as error:
                return _render_done(request, project=project, notice=_message(error))
        stage = "resolution" if request.GET.get("stage") == "resolution" else "label"
        if stage == "resolution" and not selectors.resolution_needed(
            project=project, item=item, annotator=request.user
        ):
            stage = "label"
        return _render_item(request, project=project, item=item, assignment=shown, stage=stage)

    # A save needs no claim of its own here: annotation_save checks the claim (or room) itself.
    responses = item_responses(item)
    criteria = project_criteria(project)
    arguments, posted = annotation_post_parse(
        data=request.POST, project=assigned, responses=responses, criteria=criteria
    )
    stage = "resolution" if arguments["reason"] == "resolution" else "label"
    # The page's save-and-next claims the next item in the save's transaction, unless another step may come first:
    # the after-label resolution step, or a study participant's own queue.
    claim_next = (
        bool(request.htmx)
        and not (stage == "label" and project.suggestion_display == Project.SuggestionDisplay.AFTER_LABEL)
        and PARTICIPANT_SESSION_KEY not in request.session
    )
    try:
        _, claimed = repeat_services.judgment_save_and_claim_next(
            project=project,
            item=item,
            annotator=request.user,
            save=SaveRequest(source="page", **arguments),
            claim_next=claim_next,
        )
    except ValidationError as error:
        if checks.refusal_code(error):  # handed off or closed since the page opened: say so, show no item
            return _render_done(request, project=project, notice=_message(error))
        errors = _errors(error)
        refused_on = page_selectors.assignment_for_page(project=project, item=item, annotator=request.user)
        if refused_on is None:
            return _next(request, project, notice=" ".join(m for messages in errors.values() for m in messages))
        return _render_item(
            request,
            project=project,
            item=item,
            assignment=refused_on,
            stage=stage,
            posted=posted,
            errors=errors,
            status=422,
        )
    if claim_next:
        if claimed is None:
            return _render_done(request, project=project, notice=gettext("Saved."))
        return _render_item(request, project=project, item=claimed.item, assignment=claimed, notice=gettext("Saved."))
    if stage == "label" and selectors.resolution_needed(project=project, item=item, annotator=request.user):
        if not request.htmx:
            return redirect(_item_url(project, item, "resolution"))
        own = selectors.assignment_get_own(project=project, item=item, annotator=request.user)
        if own is not None:
            return _render_item(request, project=project, item=item, assignment=own, stage="resolution")
    if not request.htmx:
        return redirect("annotate_next", project_id=project.pk)
    return _next(request, project, notice=gettext("Saved."))


@participant_open
@login_required
@require_POST
def annotate_skip(request: AnnotatorRequest, project_id: int, item_id: int) -> HttpResponse:
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    chosen, other = request.POST.get("skip_reason", ""), request.POST.get("skip_other", "")
    reason = other if chosen == "other" else chosen
    try:
        repeat_services.judgment_skip(project=project, item=item, annotator=request.user, reason=reason)
    except ValidationError as error:
        if checks.refusal_code(error):
            return _render_done(request, project=project, notice=_message(error))
        shown = page_selectors.assignment_for_page(project=project, item=item, annotator=request.user)
        if shown is None:
            return _next(request, project, notice=gettext(ITEM_FULL))
        return _render_item(
            request,
            project=project,
            item=item,
            assignment=shown,
            errors=_errors(error),
            status=422,
            skip={"reason": chosen, "other": other},
        )
    if not request.htmx:
        return redirect("annotate_next", project_id=project.pk)
    return _next(request, project, notice=gettext("Skipped."))


@participant_open
@login_required
@require_POST
def annotate_keep(request: AnnotatorRequest, project_id: int, item_id: int) -> HttpResponse:
    """ "Keep my label" on the resolution step: recorded, then the next item."""
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    try:
        resolution.resolution_keep(project=project, item=item, annotator=request.user)
    except ValidationError as error:
        raise Http404("No resolution step for this item.") from error
    if not request.htmx:
        return redirect("annotate_next", project_id=project.pk)
    return _next(request, project, notice=gettext("Your label is kept."))


@participant_open
@login_required
@require_POST
def annotate_accept(request: AnnotatorRequest, project_id: int, item_id: int) -> HttpResponse:
    """Accept fills the form from the suggestion; the annotator can still adjust before saving."""
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    try:
        assignment = claim_services.assignment_claim_item(project=project, item=item, annotator=request.user)
        services.exposure_record(
            project=project,
            item=item,
            annotator=request.user,
            kind=SuggestionExposure.Kind.ACCEPT,
            time_on_item_ms=request.POST.get("time_on_item_ms"),
        )
    except ValidationError as error:
        if checks.refusal_code(error):
            return _render_done(request, project=project, notice=_message(error))
        # No suggestion may be shown here (blind item, after-label mode, none stored): nothing to accept.
        raise Http404("No suggestion to accept.") from error
    return _render_item(
        request,
        project=project,
        item=item,
        assignment=assignment,
        accept_values=True,
        notice=gettext("Suggestion accepted: adjust the values if you disagree, then save."),
    )


@login_required
@require_GET
def annotate_done(request: AnnotatorRequest, project_id: int) -> HttpResponse:
    """My done items, latest first, each a link to reopen it (the panel under ``D``, or a page of its own)."""
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    context = {"project": project, "done": selectors.done_items_for(project=project, annotator=request.user)}
    template = "annotation/partials/done_list.html" if request.htmx else "annotation/done.html"
    return render(request, template, context)


@participant_open
@login_required
@require_GET
def annotate_previous(request: AnnotatorRequest, project_id: int) -> HttpResponse:
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    before = whole_number(request.GET.get("before", ""))
    previous = selectors.annotation_previous(project=project, annotator=request.user, before_item_id=before)
    if previous is None:
        if before is not None:
            item = item_get_with_responses_for_user(user=request.user, project=project, item_id=before)
            current = page_selectors.assignment_for_page(project=project, item=item, annotator=request.user)
            if current is None:
                return _next(request, project, notice=gettext("There is no earlier item."))
            return _render_item(
                request, project=project, item=item, assignment=current, notice=gettext("There is no earlier item.")
            )
        return _next(request, project, notice=gettext("There is no earlier item."))
    if not request.htmx:
        return redirect(_item_url(project, previous))
    # A labelled or skipped item: the page shows it under the annotator's own row, and nothing is written.
    own = page_selectors.assignment_for_page(project=project, item=previous, annotator=request.user)
    if own is None:
        return _next(request, project, notice=gettext("There is no earlier item."))
    return _render_item(request, project=project, item=previous, assignment=own)
