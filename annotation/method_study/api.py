"""REST API for method studies: a lead sets up a crossover study, reads it, and downloads its design.

Every view goes through ``method_study_get_for_lead``: annotators and outsiders get 404.
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.method_study import selectors as crossover_selectors
from annotation.method_study import services as crossover_services
from annotation.method_study.models import MethodStudy
from config.csv_safe import csv_lines

ID_MAX = 2**63 - 1


class MethodStudyCreateSerializer(serializers.Serializer):
    """Shapes only; the service checks the choices against the project and the design."""

    methods = serializers.ListField(child=serializers.ChoiceField(choices=crossover_services.STUDY_METHODS))
    annotator_ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=ID_MAX))
    item_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX),
        required=False,
        help_text="Empty or absent: every item of the project.",
    )
    block_size = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=ID_MAX)
    likert_points = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=3, max_value=11)
    repeat_rate = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0.0,
        max_value=crossover_services.REPEAT_RATE_MAX,
        help_text="Share of each annotator's labels shown to them again, unannounced, after the project's repeat "
        "delays. Absent: the project's setting.",
    )


class MethodStudySerializer(serializers.ModelSerializer):
    repeat_rate = serializers.FloatField(source="project.repeat_rate", read_only=True)

    class Meta:
        model = MethodStudy
        fields = ["id", "project", "methods", "block_size", "repeat_rate", "created_at"]
        read_only_fields = fields


class MethodStudySummarySerializer(serializers.Serializer):
    annotators = serializers.IntegerField()
    items = serializers.IntegerField()
    planned = serializers.IntegerField()
    planned_per_method = serializers.DictField(child=serializers.IntegerField())
    saved = serializers.IntegerField()


class MethodStudyStateSerializer(serializers.Serializer):
    """The study and its progress; both null when the project has none."""

    study = MethodStudySerializer(allow_null=True)
    summary = MethodStudySummarySerializer(allow_null=True)


def _study_data(study: MethodStudy | None) -> dict[str, Any]:
    """``{"study": …, "summary": …}``, both null when the project has no study (a normal state, not an error)."""
    if study is None:
        return {"study": None, "summary": None}
    return {"study": MethodStudySerializer(study).data, "summary": crossover_selectors.design_summary(study=study)}


class MethodStudyApi(APIView):
    @extend_schema(responses=MethodStudyStateSerializer)
    def get(self, request: Request, project_id: int) -> Response:
        _project, study = crossover_selectors.method_study_get_for_lead(user=request.user, project_id=project_id)
        return Response(_study_data(study))

    @extend_schema(request=MethodStudyCreateSerializer, responses={201: MethodStudyStateSerializer})
    def post(self, request: Request, project_id: int) -> Response:
        project, _study = crossover_selectors.method_study_get_for_lead(user=request.user, project_id=project_id)
        data = MethodStudyCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        arguments = dict(data.validated_data)
        if not arguments.get("item_ids"):
            arguments["item_ids"] = crossover_selectors.study_setup_choices(project=project).item_ids
        study = crossover_services.method_study_create(project=project, created_by=request.user, **arguments)
        return Response(_study_data(study), status=status.HTTP_201_CREATED)


class MethodStudyDesignApi(APIView):
    """The design as CSV: one row per planned judgment, with what became of it (only the header without a study)."""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The design")})
    def get(self, request: Request, project_id: int) -> StreamingHttpResponse:
        project, study = crossover_selectors.method_study_get_for_lead(user=request.user, project_id=project_id)
        rows = [] if study is None else crossover_selectors.design_rows(study=study)
        response = StreamingHttpResponse(
            csv_lines(crossover_selectors.DESIGN_COLUMNS, rows),
            content_type="text/csv",
        )
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-method-study-design.csv"'
        return response
