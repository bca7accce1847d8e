"""A project's start and end from the browser: the new-project page (settings, criteria rows, guidelines preview,
copy from another project), archive and delete with their confirmations.

Thin: projects.services.project_create (the API's and the create_project command's service) writes, its check_*
rules refuse; the forms only parse.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from aggregation.project_forms import (
    COPIED_SETTINGS,
    CREATE_SETTINGS,
    CriteriaFormSet,
    CriteriaFormSetFactory,
    DeleteForm,
    ProjectCreateForm,
)
from aggregation.views import _apply_errors
from annotation.rendering import markdown_render
from config.auth import signed_in_user
from projects.people import project_archive, project_delete
from projects.selectors import project_create_allowed, project_get_for_lead, project_settings_for_copy, projects_led_by
from projects.services import project_create

CRITERIA_PREFIX = "criteria"
DEFAULT_CRITERIA = [{"name": "overall", "weight": 1.0, "description": ""}]


def _criteria_formset(rows: list[dict[str, Any]]) -> CriteriaFormSet:
    """A formset holding ``rows`` as if they had been posted: the same rendering for the first visit, a copy, an
    added or removed row, without the empty rows an unbound formset with initial data would mark as required."""
    data = QueryDict(mutable=True)
    data.update({f"{CRITERIA_PREFIX}-TOTAL_FORMS": str(len(rows)), f"{CRITERIA_PREFIX}-INITIAL_FORMS": "0"})
    for index, row in enumerate(rows):
        for key in ("name", "weight", "description"):
            data[f"{CRITERIA_PREFIX}-{index}-{key}"] = _shown(row.get(key))
    return cast(CriteriaFormSet, CriteriaFormSetFactory(data, prefix=CRITERIA_PREFIX))


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _posted_rows(post: QueryDict) -> list[dict[str, Any]]:
    try:
        total = min(int(post.get(f"{CRITERIA_PREFIX}-TOTAL_FORMS", "0")), 20)
    except ValueError:
        total = 0
    rows = []
    for index in range(total):
        if post.get(f"{CRITERIA_PREFIX}-{index}-DELETE"):
            continue
        rows.append(
            {key: post.get(f"{CRITERIA_PREFIX}-{index}-{key}", "") for key in ("name", "weight", "description")}
        )
    return rows


def _copied(request: HttpRequest, source_id: int | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if source_id is None:
        return {}, DEFAULT_CRITERIA
    values, criteria = project_settings_for_copy(
        user=request.user, project_id=source_id, names=(*CREATE_SETTINGS, *COPIED_SETTINGS)
    )
    values.pop("name", None)
    rows = [{"name": c.name, "weight": c.weight, "description": c.description} for c in criteria]
    return values, rows


def _source_id(raw: str | None) -> int | None:
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    if not project_create_allowed(user):
        raise Http404(_("Creating projects is not open to this account."))
    sources = projects_led_by(user=user)
    post = request.POST if request.method == "POST" else None
    source_id = _source_id((post or request.GET).get("copy_from"))
    copied, copied_rows = _copied(request, source_id)
    show_errors = False
    preview = None
    if post is None:
        form = ProjectCreateForm(initial={**copied, "copy_from": source_id}, sources=sources)
        formset = _criteria_formset(copied_rows)
    else:
        form = ProjectCreateForm(post, sources=sources)
        action = post.get("action", "create")
        rows = _posted_rows(post)
        if action == "add_criterion":
            formset = _criteria_formset([*rows, {"name": "", "weight": None, "description": ""}])
        elif action == "remove_criteria":
            formset = _criteria_formset(rows)
        else:
            formset = cast(CriteriaFormSet, CriteriaFormSetFactory(post, prefix=CRITERIA_PREFIX))
        if action == "preview":
            preview = markdown_render(post.get("guidelines", ""))
            if request.htmx:  # type: ignore[attr-defined]
                return render(request, "projects/partials/guidelines_preview.html", {"preview": preview})
        if action == "create":
            show_errors = True
            if form.is_valid() and formset.is_valid():
                pairs, descriptions = formset.criteria()
                settings = {**{k: v for k, v in copied.items() if k in COPIED_SETTINGS}, **form.settings()}
                try:
                    project = project_create(
                        name=settings.pop("name"),
                        lead=user,
                        criteria=pairs,
                        criterion_descriptions=descriptions,
                        **settings,
                    )
                except ValidationError as error:
                    _apply_errors(form, error)
                    if "criteria" in getattr(error, "message_dict", {}):
                        formset.non_form_errors().extend(error.message_dict["criteria"])
                else:
                    messages.success(request, _("Project created. Next: invite people and import items."))
                    return redirect("people_page", project_id=project.pk)
    context = {
        "form": form,
        "formset": formset,
        "preview": preview,
        "show_errors": show_errors,
        "sources": sources,
    }
    return render(request, "projects/new.html", context, status=400 if show_errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def project_archive_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    error = None
    if request.method == "POST":
        try:
            project_archive(project=project)
        except ValidationError as refused:
            error = " ".join(refused.messages)
        else:
            messages.success(request, _("%(name)s is archived: labelling is closed.") % {"name": project.name})
            return redirect("dashboard", project_id=project.pk)
    return render(request, "projects/archive.html", {"project": project, "error": error}, status=400 if error else 200)


@login_required
@require_http_methods(["GET", "POST"])
def project_delete_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    form = DeleteForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            project_delete(project=project, confirmation=form.cleaned_data["confirmation"])
        except ValidationError as error:
            _apply_errors(form, error)
        else:
            messages.success(request, _("%(name)s is deleted.") % {"name": project.name})
            return redirect("home")
    counts = {
        "items": project.items.count(),
        "labels": project.annotations.count(),
        "members": project.memberships.count(),
    }
    status = 400 if form.is_bound else 200
    return render(request, "projects/delete.html", {"project": project, "form": form, **counts}, status=status)
