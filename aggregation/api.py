"""REST API for what leads read: aggregates, the stats figures, suggestions, and the exports.

All of it is for leads only (annotators and outsiders get 404 from the selector): annotators never read the
aggregates, other annotators' labels or a suggestion through the API. Everything reads stored aggregates; nothing here
computes figures inside a request.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aggregation.export import FORMATS, MAX_MIN_ANNOTATORS, PAIRS, ExportOptions, export_filename, export_lines
from aggregation.export_tasks import export_job_start
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance
from projects.api import JOB_ACCEPTED, IdPagination, job_accepted
from projects.jobs import job_stream_bytes
from projects.models import Job, Suggestion, SuggestionValue
from projects.selectors import project_get_for_lead

AGREEMENT_FIGURES = ("pairwise_with_ties", "pairwise_without_ties", "alpha_nominal", "alpha_interval", "ifs")


def _figure(raw: Any) -> dict[str, Any]:
    """{"value", "n", "ci": [low, high]} whatever was stored; nulls when a figure is not computed yet."""
    raw = raw if isinstance(raw, dict) else {}
    ci = raw.get("ci")
    return {
        "value": raw.get("value"),
        "n": raw.get("n") or 0,
        "ci": list(ci) if isinstance(ci, list | tuple) and len(ci) == 2 else [None, None],
    }


def stats_for(aggregate: ProjectAggregate | None) -> dict[str, Any]:
    agreement = aggregate.agreement if aggregate else {}
    suggestions = aggregate.suggestions if aggregate else {}
    return {
        "agreement": {name: _figure(agreement.get(name)) for name in AGREEMENT_FIGURES},
        "blind": {"agreement": _figure((suggestions.get("blind") or {}).get("agreement"))},
        "shown": {"agreement": _figure((suggestions.get("shown") or {}).get("agreement"))},
        "anchoring_gap": _figure(suggestions.get("anchoring_gap")),
        "accept": suggestions.get("accept") or {"count": 0, "rate": None},
        "human_human": suggestions.get("human_human") or {},
        "handoff": suggestions.get("handoff") or {},
        "progress": aggregate.progress if aggregate else {},
        "computed_at": aggregate.computed_at if aggregate else None,
        "agreement_computed_at": aggregate.agreement_computed_at if aggregate else None,
        "suggestions_computed_at": aggregate.suggestions_computed_at if aggregate else None,
    }


FIGURE = inline_serializer(
    name="Figure",
    fields={
        "value": serializers.FloatField(allow_null=True),
        "n": serializers.IntegerField(),
        "ci": serializers.ListField(child=serializers.FloatField(allow_null=True), min_length=2, max_length=2),
    },
)
STATS = inline_serializer(
    name="Stats",
    fields={
        "agreement": inline_serializer(name="AgreementFigures", fields={name: FIGURE for name in AGREEMENT_FIGURES}),
        "blind": inline_serializer(name="BlindFigures", fields={"agreement": FIGURE}),
        "shown": inline_serializer(name="ShownFigures", fields={"agreement": FIGURE}),
        "anchoring_gap": FIGURE,
        "accept": serializers.DictField(),
        "human_human": serializers.DictField(),
        "handoff": serializers.DictField(),
        "progress": serializers.DictField(),
        "computed_at": serializers.DateTimeField(allow_null=True),
        "agreement_computed_at": serializers.DateTimeField(allow_null=True),
        "suggestions_computed_at": serializers.DateTimeField(allow_null=True),
    },
)


class StatsApi(APIView):
    @extend_schema(responses=STATS, description="Headline figures from stored aggregates. Leads only.")
    def get(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        return Response(stats_for(ProjectAggregate.objects.filter(project=project).first()))


class ItemAggregateSerializer(serializers.ModelSerializer):
    item_external_id = serializers.CharField(source="item.external_id")

    class Meta:
        model = ItemAggregate
        fields = [
            "item",
            "item_external_id",
            "provenance",
            "operator",
            "best_position",
            "worst_position",
            "p_best",
            "margin",
            "hesitation",
            "agreement",
            "signed_preference",
            "n_annotators",
            "computed_at",
        ]
        read_only_fields = fields


class AnnotatorAggregateSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username")

    class Meta:
        model = AnnotatorAggregate
        fields = [
            "annotator",
            "weight",
            "consistency",
            "expertise",
            "agreement",
            "consensus_weight",
            "n_labels",
            "median_time_ms",
            "mean_hesitation",
            "blind_agreement",
            "blind_n",
            "computed_at",
        ]
        read_only_fields = fields


class ItemAggregatePagination(IdPagination):
    ordering = "item_id"


class ItemAggregateListApi(APIView):
    pagination_class = ItemAggregatePagination

    @extend_schema(
        parameters=[OpenApiParameter("provenance", str, enum=Provenance.values)],
        responses=ItemAggregateSerializer(many=True),
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        rows = ItemAggregate.objects.filter(project=project).select_related("item")
        if request.query_params.get("provenance") in Provenance.values:
            rows = rows.filter(provenance=request.query_params["provenance"])
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(ItemAggregateSerializer(page, many=True).data)


class AnnotatorAggregateListApi(APIView):
    @extend_schema(responses=AnnotatorAggregateSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        rows = AnnotatorAggregate.objects.filter(project=project).select_related("annotator").order_by("-weight")
        return Response(AnnotatorAggregateSerializer(rows, many=True).data)


class SuggestionListSerializer(serializers.ModelSerializer):
    item_external_id = serializers.CharField(source="item.external_id")
    item_is_blind = serializers.BooleanField(source="item.is_blind")
    values = serializers.SerializerMethodField()

    class Meta:
        model = Suggestion
        fields = [
            "item",
            "item_external_id",
            "item_is_blind",
            "status",
            "preferred_position",
            "rationale",
            "model_name",
            "source",
            "failure_reason",
            "attempts",
            "values",
            "updated_at",
        ]
        read_only_fields = fields

    def get_values(self, suggestion: Suggestion) -> list[dict[str, Any]]:
        return [
            {"position": v.response.position, "mu": v.mu / 1000, "nu": v.nu / 1000} for v in suggestion.values.all()
        ]


class SuggestionListApi(APIView):
    pagination_class = IdPagination

    @extend_schema(responses=SuggestionListSerializer(many=True), description="Leads only.")
    def get(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        rows = (
            Suggestion.objects.filter(item__project=project)
            .select_related("item")
            .prefetch_related(Prefetch("values", queryset=SuggestionValue.objects.select_related("response")))
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(SuggestionListSerializer(page, many=True).data)


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default="dpo")
    min_annotators = serializers.IntegerField(required=False, min_value=0, max_value=MAX_MIN_ANNOTATORS)
    max_hesitation = serializers.FloatField(required=False, min_value=0, max_value=1)
    min_margin = serializers.FloatField(required=False, min_value=0, max_value=2)
    provenance = serializers.ChoiceField(choices=Provenance.values, required=False)
    pairs = serializers.ChoiceField(choices=PAIRS, default="best_worst")

    def options(self) -> ExportOptions:
        return ExportOptions(**self.validated_data)


EXPORT_PARAMETERS = [
    OpenApiParameter("format", str, enum=FORMATS, description="dpo (default), soft, ifs or annotations."),
    OpenApiParameter("min_annotators", int),
    OpenApiParameter("max_hesitation", float),
    OpenApiParameter("min_margin", float, description="|S_chosen − S_rejected|; default: the project's tie tolerance"),
    OpenApiParameter("provenance", str, enum=Provenance.values),
    OpenApiParameter("pairs", str, enum=PAIRS, description="Items with more than two responses."),
]


class ExportApi(APIView):
    """GET streams JSON Lines; POST starts the same export as a background job writing a file."""

    # DRF reads ?format= as a renderer override and would answer 404 for "dpo"; here it names the export format.
    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=EXPORT_PARAMETERS,
        responses={(200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines")},
    )
    def get(self, request: Request, project_id: int) -> StreamingHttpResponse:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = query.options()
        lines = export_lines(project=project, options=options)
        response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{export_filename(project=project, options=options)}"'
        response["X-Accel-Buffering"] = "no"
        return response

    @extend_schema(parameters=EXPORT_PARAMETERS, request=None, responses={202: JOB_ACCEPTED})
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return job_accepted(request, export_job_start(project=project, user=request.user, options=query.options()))


class ExportDownloadApi(APIView):
    @extend_schema(responses={(200, "application/jsonl"): OpenApiResponse(OpenApiTypes.BINARY)})
    def get(self, request: Request, job_id: int) -> StreamingHttpResponse:
        project_id = Job.objects.filter(pk=job_id, kind=Job.Kind.EXPORT).values_list("project_id", flat=True).first()
        if project_id is None:
            raise Http404("No such export.")
        project = project_get_for_lead(user=request.user, project_id=project_id)
        job = Job.objects.get(pk=job_id, project=project)
        if job.status != Job.Status.DONE:
            raise ValidationError({"job": f"The export is {job.status}; download it once it is done."})
        response = StreamingHttpResponse(job_stream_bytes(job_id=job.pk), content_type="application/jsonl")
        filename = job.result.get("filename", "export.jsonl")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
