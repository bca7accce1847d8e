"""The lead's method-study page: set up a crossover study, then see its plan and download it for audit."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.method_study import design as crossover_design
from annotation.method_study import selectors as crossover_selectors
from annotation.method_study import services as crossover_services
from config.csv_safe import csv_lines
from projects.models import Project


def _form_arguments(data: QueryDict, project: Project) -> tuple[dict[str, Any], list[str]]:
    """The POSTed form as the service's arguments; items are all the project's unless external ids are listed."""
    problems: list[str] = []
    external = data.get("external_ids", "").split()
    if external:
        item_ids, missing = crossover_selectors.item_ids_by_external(project=project, external_ids=external)
        if missing:
            problems.append(f"No items with these ids: {', '.join(missing[:10])}.")
    else:
        item_ids = crossover_selectors.study_setup_choices(project=project).item_ids
    return {
        "methods": data.getlist("methods"),
        "annotator_ids": data.getlist("annotator_ids"),
        "item_ids": item_ids,
        "block_size": data.get("block_size") or None,
        "likert_points": data.get("likert_points") or None,
        "repeat_rate": data.get("repeat_rate") or None,
    }, problems


@login_required
@require_http_methods(["GET", "POST"])
def method_study_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project, study = crossover_selectors.method_study_get_for_lead(user=request.user, project_id=project_id)
    errors: list[str] = []
    if request.method == "POST" and study is None:
        arguments, errors = _form_arguments(request.POST, project)
        if not errors:
            try:
                crossover_services.method_study_create(project=project, created_by=request.user, **arguments)
            except ValidationError as error:
                errors = [
                    f"{'' if f == '__all__' else f + ': '}{m}" for f, ms in error.message_dict.items() for m in ms
                ]
            else:
                return redirect("method_study", project_id=project.pk)
    context: dict[str, Any] = {
        "project": project,
        "study": study,
        "errors": errors,
        "posted": request.method == "POST",
        "checked_methods": request.POST.getlist("methods"),
        "choices": crossover_selectors.study_setup_choices(project=project),
        "methods": [
            (method, crossover_selectors.method_label(method, project.likert_points))
            for method in crossover_services.STUDY_METHODS
        ],
    }
    if study is None:
        # What the default design (every annotator, item and method) will give, said before the lead sets it up.
        choices = context["choices"]
        n_methods = len(crossover_services.STUDY_METHODS)
        context["default_shortfall"] = (
            crossover_design.agreement_shortfall(
                n_methods=n_methods,
                n_annotators=len(choices.annotators),
                n_items=choices.item_count,
                block_size=crossover_design.default_block_size(
                    n_methods=n_methods, n_annotators=len(choices.annotators), n_items=choices.item_count
                ),
            )
            if choices.annotators and choices.item_count
            else None
        )
    if study is not None:
        context["summary"] = crossover_selectors.design_summary(study=study)
        context["study_methods"] = [crossover_selectors.method_label(m, project.likert_points) for m in study.methods]
    return render(request, "study/method_study.html", context, status=422 if errors else 200)


@login_required
@require_GET
def method_study_design_csv(request: HttpRequest, project_id: int) -> HttpResponse | StreamingHttpResponse:
    """Who does (did) what, in which order: one row per planned judgment."""
    project, study = crossover_selectors.method_study_get_for_lead(user=request.user, project_id=project_id)
    if study is None:
        return redirect("method_study", project_id=project.pk)
    response = StreamingHttpResponse(
        csv_lines(crossover_selectors.DESIGN_COLUMNS, crossover_selectors.design_rows(study=study)),
        content_type="text/csv",
    )
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-method-study-design.csv"'
    return response
