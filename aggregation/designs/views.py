"""The method study's report for leads: the page, its figures as CSV, its plots as SVG, and the JSON API.

Every view reaches the study through ``method_study_get_for_lead``: annotators and outsiders get 404.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aggregation.designs.report import FIGURE_COLUMNS, PLOTS, figure_rows, method_study_report, report_plot
from annotation.method_study.selectors import method_study_get_for_lead, study_agreement_shortfall
from config.csv_safe import csv_lines


@login_required
@require_GET
def method_study_report_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project, study = method_study_get_for_lead(user=request.user, project_id=project_id)
    context: dict[str, Any] = {"project": project, "study": study, "report": None}
    if study is not None:
        report = method_study_report(study=study)
        labels = report["method_labels"]
        context.update(
            report=report,
            shortfall=study_agreement_shortfall(study=study),
            methods=[{**entry, "label": labels[entry["method"]]} for entry in report["figures"]["methods"]],
            paired=[
                {**row, "first_label": labels[row["first"]], "second_label": labels[row["second"]]}
                for row in report["figures"]["paired"]
            ],
            consistency=[
                {**entry, "label": labels[entry["method"]]} for entry in report["self_consistency"]["methods"]
            ],
            consistency_paired=[
                {**row, "first_label": labels[row["first"]], "second_label": labels[row["second"]]}
                for row in report["self_consistency"]["paired"]
            ],
            plots={name: mark_safe(report_plot(report, name)) for name in PLOTS} if report["saved"] else {},
        )
    return render(request, "dashboard/method_study_report.html", context)


@login_required
@require_GET
def method_study_report_csv(request: HttpRequest, project_id: int) -> StreamingHttpResponse:
    project, study = method_study_get_for_lead(user=request.user, project_id=project_id)
    if study is None:
        raise Http404("No method study.")
    rows = figure_rows(method_study_report(study=study))
    response = StreamingHttpResponse(csv_lines(FIGURE_COLUMNS, rows), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-method-study-figures.csv"'
    return response


@login_required
@require_GET
def method_study_report_svg(request: HttpRequest, project_id: int, plot: str) -> HttpResponse:
    project, study = method_study_get_for_lead(user=request.user, project_id=project_id)
    if study is None or plot not in PLOTS:
        raise Http404("No such plot.")
    response = HttpResponse(report_plot(method_study_report(study=study), plot), content_type="image/svg+xml")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-method-study-{plot}.svg"'
    return response


class MethodStudyReportApi(APIView):
    """Per method: agreement on the common scale, agreement with gold and with the others, seconds per item and
    fatigue slopes, each with n and a 95 % interval; paired within-annotator differences between methods; and
    ``self_consistency``: per method from the unannounced repeats (``empty`` says why there are none). ``study`` is
    null for a project without a method study."""

    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT)})
    def get(self, request: Request, project_id: int) -> Response:
        _project, study = method_study_get_for_lead(user=request.user, project_id=project_id)
        if study is None:
            return Response({"study": None, "report": None})
        return Response({"study": study.pk, "report": method_study_report(study=study)})
