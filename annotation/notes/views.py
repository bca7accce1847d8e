"""Flags and the lead's item actions. Annotators flag from the annotation page (htmx swaps the small form, a plain
post redirects back); leads comment, set gold, send back and resolve flags from the review page and the dashboard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.notes import services as note_services
from annotation.notes.selectors import own_flags
from config.input_limits import whole_number
from projects.models import TIE
from projects.selectors import item_get_for_user, project_get_for_annotator, project_get_for_lead


def _messages_of(error: ValidationError) -> str:
    return " ".join(error.messages)


@login_required
@require_POST
def item_flag(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    project = project_get_for_annotator(user=request.user, project_id=project_id)
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    error = ""
    text = request.POST.get("text", "")
    try:
        note_services.item_flag_create(project=project, item=item, annotator=request.user, text=text)  # type: ignore[arg-type]
        text = ""
    except ValidationError as raised:
        error = _messages_of(raised)
    if request.htmx:  # type: ignore[attr-defined]
        context = {
            "project": project,
            "item": item,
            "flags": own_flags(project=project, item=item, annotator=request.user),
            "flag_error": error,
            "flag_text": text,
            "flag_sent": not error,
        }
        return render(request, "annotation/partials/flag.html", context, status=400 if error else 200)
    (messages.error if error else messages.success)(request, error or "Flag sent to the lead.")
    return redirect("annotate_item", project_id=project.pk, item_id=item.pk)


def _lead_action(
    request: HttpRequest, project_id: int, item_id: int, act: Callable[..., Any], success: str
) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    try:
        act(project=project, item=item, lead=request.user)
        messages.success(request, success)
    except ValidationError as error:
        messages.error(request, _messages_of(error))
    return redirect("item_review", project_id=project.pk, item_id=item.pk)


@login_required
@require_POST
def item_comment(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    text = request.POST.get("text", "")

    def act(**kwargs: Any) -> None:
        note_services.item_comment_create(text=text, **kwargs)

    return _lead_action(request, project_id, item_id, act, "Comment saved.")


def _gold_choice(raw: str) -> int | None:
    if raw in ("", "none"):
        return None
    if raw == "tie":
        return TIE
    try:
        return int(raw)
    except ValueError:
        raise ValidationError({"gold_position": "Choose a response, a tie or none."}) from None


@login_required
@require_POST
def item_gold(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    def act(**kwargs: Any) -> None:
        note_services.item_gold_set(gold_position=_gold_choice(request.POST.get("gold", "")), **kwargs)

    return _lead_action(request, project_id, item_id, act, "Gold saved: the figures are being recomputed.")


@login_required
@require_POST
def item_send_back(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    raw = request.POST.get("more", "1")

    def act(**kwargs: Any) -> None:
        more = whole_number(raw)
        if more is None:
            raise ValidationError({"more": "Ask for a whole number of labels."})
        note_services.item_send_back(more=more, reason=request.POST.get("reason", ""), **kwargs)

    return _lead_action(request, project_id, item_id, act, "Sent back: the queue serves this item again.")


@login_required
@require_POST
def flag_resolve(request: HttpRequest, project_id: int, note_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    try:
        note_services.item_flag_resolve(project=project, note_id=note_id, lead=request.user)  # type: ignore[arg-type]
        messages.success(request, "Flag resolved.")
    except ValidationError as error:
        messages.error(request, _messages_of(error))
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(back)
    return redirect(reverse("dashboard", kwargs={"project_id": project.pk}))
