"""REST API for what leads read: aggregates, the stats figures and the exports (suggestions: suggestions.api).

All of it is for leads only (annotators and outsiders get 404 from the selector): annotators never read the
aggregates, other annotators' labels or a suggestion through the API. Everything reads stored aggregates; nothing here
computes figures inside a request.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aggregation.exports.card import export_card
from aggregation.exports.options import (
    FORMATS,
    MAX_MIN_ANNOTATORS,
    PAIRS,
    TIES,
    ExportOptions,
    metadata_keys_problem,
)
from aggregation.exports.stream import export_filename, export_lines
from aggregation.exports.tasks import export_job_start
from aggregation.hesitation import hesitation_for_lead
from aggregation.maths import minimums
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance
from aggregation.selectors import (
    Staleness,
    annotator_aggregates_for_lead,
    figures_staleness,
    item_aggregates_for_lead,
    project_aggregate_for_lead,
)
from config.auth import signed_in_user
from projects.api import JOB_ACCEPTED, IdPagination, job_accepted
from projects.jobs import job_stream_bytes
from projects.models import Job
from projects.selectors import job_get_for_lead, project_get_for_lead

#: Set on every export answer: "1; reason" while the figures lag behind the labels or the settings, else "0".
STALE_HEADER = "X-Penumbra-Stale"

AGREEMENT_FIGURES = ("pairwise_with_ties", "pairwise_without_ties", "alpha_nominal", "alpha_interval", "ifs")


def _figure(raw: Any) -> dict[str, Any]:
    """{"value", "n", "ci": [low, high], "reason"} whatever was stored; nulls when a figure is not computed yet.

    ``reason`` is null when ``value`` is a number, and otherwise says why it is not: too few comparisons (a figure
    with fewer than 5 is withheld, "needs 5 comparisons (3 so far)"), not computed yet, or undefined on the data.
    """
    raw = raw if isinstance(raw, dict) else {}
    ci = raw.get("ci")
    value = raw.get("value")
    reason = raw.get("reason")
    if value is None and not reason:
        reason = "not computed yet" if not raw else "undefined on these data"
    return {
        "value": value,
        "n": raw.get("n") or 0,
        "ci": list(ci) if isinstance(ci, list | tuple) and len(ci) == 2 else [None, None],
        "reason": None if value is not None else reason,
    }


def stale_header(staleness: Staleness) -> str:
    return f"1; {staleness.reason}" if staleness.stale else "0"


def stats_for(aggregate: ProjectAggregate | None, staleness: Staleness | None = None) -> dict[str, Any]:
    agreement = (aggregate.agreement if aggregate else None) or {}
    suggestions = (aggregate.suggestions if aggregate else None) or {}
    staleness = staleness or Staleness()
    return {
        "stale": staleness.stale,
        "stale_reasons": list(staleness.reasons),
        "stale_reason": staleness.reason,
        "agreement": {name: _figure(minimums.agreement_shown(agreement.get(name))) for name in AGREEMENT_FIGURES},
        "blind": {"agreement": _figure((suggestions.get("blind") or {}).get("agreement"))},
        "unaided": {"agreement": _figure((suggestions.get("unaided") or {}).get("agreement"))},
        "blind_sources": suggestions.get("blind_sources") or {},
        "shown": {"agreement": _figure((suggestions.get("shown") or {}).get("agreement"))},
        "gold": {"agreement": _figure((suggestions.get("gold") or {}).get("agreement"))},
        "anchoring_gap": _figure(suggestions.get("anchoring_gap")),
        "accept": suggestions.get("accept") or {"count": 0, "rate": None},
        "human_human": {side: _figure((suggestions.get("human_human") or {}).get(side)) for side in ("blind", "shown")},
        "handoff": suggestions.get("handoff") or {},
        "progress": aggregate.progress if aggregate else {},
        "labeling": (aggregate.labeling if aggregate else None) or {},
        "study": (aggregate.study if aggregate else None) or {},
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
        "reason": serializers.CharField(allow_null=True),
    },
)
STATS = inline_serializer(
    name="Stats",
    fields={
        "agreement": inline_serializer(name="AgreementFigures", fields={name: FIGURE for name in AGREEMENT_FIGURES}),
        "blind": inline_serializer(
            name="BlindFigures",
            fields={"agreement": FIGURE},
            help_text=(
                "Blind agreement: the design-based (Hájek) estimate over the fixed random blind sample, each sampled "
                "item weighted by 1/π; what the handoff rule, the anchoring gap and per-annotator figures use."
            ),
        ),
        "unaided": inline_serializer(
            name="UnaidedFigures",
            fields={"agreement": FIGURE},
            help_text="Every label saved without exposure pooled, whatever its source: not a random sample.",
        ),
        "blind_sources": serializers.DictField(
            help_text=(
                "Unexposed labels per source (random_sample, calibration, certification, audit, verification, "
                "after_label, import, other): n labels, items, in_blind_agreement, use (how it enters), and for "
                "calibration and certification the draw's own Hájek estimate."
            )
        ),
        "shown": inline_serializer(name="ShownFigures", fields={"agreement": FIGURE}),
        "gold": inline_serializer(name="GoldFigures", fields={"agreement": FIGURE}),
        "anchoring_gap": FIGURE,
        "accept": serializers.DictField(),
        "human_human": inline_serializer(name="HumanHumanFigures", fields={"blind": FIGURE, "shown": FIGURE}),
        "handoff": serializers.DictField(),
        "progress": serializers.DictField(),
        "labeling": serializers.DictField(
            help_text=(
                "Figures from label requests: calibration per confidence bin, certification (Hájek estimate of the "
                "model's accuracy with its interval, Horvitz-Thompson and gold beside it), audit state, and "
                "verification keep/change rates (never used as accuracy). Each estimate has value, ci, items, labels."
            )
        ),
        "study": serializers.DictField(
            help_text=(
                "position_bias: rate of preferring the response shown first (ties left out) for the project (interval "
                "clustered by annotator) and per annotator (Wilson), flagged when the 95 % interval excludes 0.5; "
                "consistency: per annotator 1 − mean distance to their own unannounced repeats, with a t interval; "
                "repeats: answered and open counts; adaptive: extra labels granted and spent, and how many "
                "preferences they flipped or firmed up."
            )
        ),
        "stale": serializers.BooleanField(
            help_text="The figures lag behind new labels or a settings change; a recomputation is under way."
        ),
        "stale_reasons": serializers.ListField(
            child=serializers.ChoiceField(choices=["new_labels", "settings_changed"])
        ),
        "stale_reason": serializers.CharField(allow_null=True),
        "computed_at": serializers.DateTimeField(allow_null=True),
        "agreement_computed_at": serializers.DateTimeField(allow_null=True),
        "suggestions_computed_at": serializers.DateTimeField(allow_null=True),
    },
)


class StatsApi(APIView):
    @extend_schema(
        responses=STATS,
        description=(
            "Headline figures from stored aggregates, each with its 95 % interval over items. Blind agreement is how "
            "often the model agrees with unaided people (not its accuracy); human-human agreement is the ceiling on "
            "a subjective task; gold agreement is the model's accuracy against the reference answer on items with "
            "a gold preference. A figure with fewer than 5 comparisons has value null and a reason. Leads only."
        ),
    )
    def get(self, request: Request, project_id: int) -> Response:
        project, aggregate = project_aggregate_for_lead(user=request.user, project_id=project_id)
        return Response(stats_for(aggregate, figures_staleness(project=project, aggregate=aggregate)))


class HesitationApi(APIView):
    @extend_schema(
        responses={200: OpenApiResponse(description="Reliability diagram and slope, per project and per person.")},
        description=(
            "Does a person's hesitation π predict when they disagree with the others? Per project and per person "
            "(at least 30 labels shared with someone): disagreement by bin of π with intervals clustered by item, "
            "and the slope of disagreement on π with its 95 % interval (predicts: the interval lies above 0). IFS "
            "projects only. Leads only."
        ),
    )
    def get(self, request: Request, project_id: int) -> Response:
        return Response(hesitation_for_lead(user=request.user, project_id=project_id))


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
    weight = serializers.FloatField(allow_null=True)
    weight_reason = serializers.CharField(
        allow_null=True,
        help_text="Null when the weight is shown; else what it needs (weight, agreement and consensus weight are null "
        "until then: see the minimums in docs/guides/maths.md).",
    )

    expertise_reason = serializers.CharField(
        allow_null=True,
        help_text="Null when the expertise is shown; else what it needs (expertise is null until then). expertise_n: "
        "the gold items it is measured on.",
    )

    class Meta:
        model = AnnotatorAggregate
        fields = [
            "annotator",
            "weight",
            "weight_reason",
            "consistency",
            "expertise",
            "expertise_n",
            "expertise_reason",
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
        rows = item_aggregates_for_lead(
            user=request.user, project_id=project_id, provenance=request.query_params.get("provenance")
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(ItemAggregateSerializer(page, many=True).data)


class AnnotatorAggregateListApi(APIView):
    @extend_schema(responses=AnnotatorAggregateSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        rows = annotator_aggregates_for_lead(user=request.user, project_id=project_id)
        return Response(AnnotatorAggregateSerializer(rows, many=True).data)


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default="dpo")
    min_annotators = serializers.IntegerField(required=False, min_value=0, max_value=MAX_MIN_ANNOTATORS)
    max_hesitation = serializers.FloatField(required=False, min_value=0, max_value=1)
    min_agreement = serializers.FloatField(required=False, min_value=0, max_value=1)
    min_margin = serializers.FloatField(required=False, min_value=0, max_value=2)
    provenance = serializers.ChoiceField(choices=Provenance.values, required=False)
    pairs = serializers.ChoiceField(choices=PAIRS, default="best_worst")
    ties = serializers.ChoiceField(choices=TIES, required=False)
    metadata = serializers.CharField(required=False, allow_blank=True, max_length=2000)

    def validate_metadata(self, value: str) -> tuple[str, ...]:
        keys = tuple(key.strip() for key in value.split(",") if key.strip())
        problem = metadata_keys_problem(keys)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return keys

    def options(self) -> ExportOptions:
        return ExportOptions(**self.validated_data)


EXPORT_PARAMETERS = [
    OpenApiParameter(
        "format", str, enum=FORMATS, description="dpo (default), soft, ifs, annotations, rankings or kto."
    ),
    OpenApiParameter("min_annotators", int),
    OpenApiParameter("max_hesitation", float, description="IFS only: binary and Likert items have no hesitation."),
    OpenApiParameter("min_agreement", float, description="Item agreement among annotators; every mode has one."),
    OpenApiParameter(
        "min_margin",
        float,
        description="Leave out pairs whose consensus_margin |S_chosen − S_rejected| (0 to 2) is below this.",
    ),
    OpenApiParameter("provenance", str, enum=Provenance.values),
    OpenApiParameter("pairs", str, enum=PAIRS, description="Items with more than two responses."),
    OpenApiParameter(
        "ties",
        str,
        enum=TIES,
        description="Pairs within the tie tolerance, or whose votes split evenly: left out (default for dpo) or "
        'kept with "tie": true (default for soft and ifs).',
    ),
    OpenApiParameter(
        "metadata",
        str,
        description="Item metadata keys, comma-separated (letters, digits, _; at most 20), written as string columns "
        "metadata_<key> in dpo, soft and ifs (null where an item has none).",
    ),
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
        response[STALE_HEADER] = stale_header(figures_staleness(project=project))
        return response

    @extend_schema(parameters=EXPORT_PARAMETERS, request=None, responses={202: JOB_ACCEPTED})
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return job_accepted(
            request, export_job_start(project=project, user=signed_in_user(request), options=query.options())
        )


class ExportCardApi(APIView):
    """The dataset card (README.md, Hugging Face layout) of the export the same query would give."""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=EXPORT_PARAMETERS,
        responses={(200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="README.md")},
        description="Counts by provenance, blind agreement, the anchoring gap, the human-human ceiling, "
        "certification and audit results, and the share of labels given with a suggestion on screen. Leads only.",
    )
    def get(self, request: Request, project_id: int) -> HttpResponse:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        response = HttpResponse(
            export_card(project=project, options=query.options()), content_type="text/markdown; charset=utf-8"
        )
        response["Content-Disposition"] = 'inline; filename="README.md"'
        return response


class ExportDownloadApi(APIView):
    @extend_schema(responses={(200, "application/jsonl"): OpenApiResponse(OpenApiTypes.BINARY)})
    def get(self, request: Request, job_id: int) -> StreamingHttpResponse:
        job = job_get_for_lead(user=request.user, job_id=job_id, kind=Job.Kind.EXPORT)
        if job.status != Job.Status.DONE:
            raise ValidationError({"job": f"The export is {job.status}; download it once it is done."})
        response = StreamingHttpResponse(job_stream_bytes(job_id=job.pk), content_type="application/jsonl")
        filename = job.result.get("filename", "export.jsonl")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        # Staleness as it was when the job wrote the file (older jobs did not record it: "0").
        response[STALE_HEADER] = f"1; {job.result.get('stale_reason')}" if job.result.get("stale") else "0"
        return response
