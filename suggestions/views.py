"""The lead's suggestion card: the page and its HTMX fragment, and the posts that act on it (lead only)."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from projects.selectors import project_get_for_lead
from suggestions.handoff import handoff_apply, handoff_preview, handoff_undo
from suggestions.selectors import suggestion_card_context
from suggestions.services import suggestion_job_start

CARD_PARTIAL = "suggestions/partials/card.html"


def _error_text(error: ValidationError) -> str:
    return " ".join(error.messages)


@login_required
@require_GET
def suggestion_card(request: HttpRequest, project_id: int) -> HttpResponse:
    card = suggestion_card_context(user=request.user, project_id=project_id)
    template = CARD_PARTIAL if request.htmx else "suggestions/card_page.html"  # type: ignore[attr-defined]
    return render(request, template, {"card": card, "project": card["project"]})


def _back(request: HttpRequest, project_id: int) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        card = suggestion_card_context(user=request.user, project_id=project_id)
        return render(request, CARD_PARTIAL, {"card": card, "project": card["project"]})
    return redirect("suggestion_card", project_id=project_id)


@login_required
@require_http_methods(["GET", "POST"])
def suggestion_handoff(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: the confirmation page with what a handoff would do now; POST: hand off."""
    project = project_get_for_lead(user=request.user, project_id=project_id)
    if request.method == "GET":
        context = {"project": project, "preview": handoff_preview(project=project)}
        return render(request, "suggestions/handoff_confirm.html", context)
    try:
        decision = handoff_apply(project=project, user=cast(User, request.user))
        messages.success(request, decision.explanation)
    except ValidationError as error:
        messages.error(request, _error_text(error))
    return _back(request, project_id)


@login_required
@require_POST
def suggestion_handoff_undo(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    try:
        decision = handoff_undo(project=project, user=cast(User, request.user))
        messages.success(request, decision.explanation)
    except ValidationError as error:
        messages.error(request, _error_text(error))
    return _back(request, project_id)


@login_required
@require_POST
def suggestion_generate(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    try:
        suggestion_job_start(
            project=project, user=cast(User, request.user), overwrite=request.POST.get("overwrite") == "1"
        )
        messages.info(request, "Generating suggestions: progress shows below.")
    except ValidationError as error:
        messages.error(request, _error_text(error))
    return _back(request, project_id)
