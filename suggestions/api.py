"""REST API of the model's side, for leads only (annotators and outsiders get 404 from the selector): the
suggestions with their values, starting a generation job, and handing off (or undoing it).
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import LabelRequest
from projects.api import JOB_ACCEPTED, IdPagination, job_accepted
from projects.models import Suggestion
from projects.selectors import project_get_for_lead
from suggestions.contracts import budget_figure
from suggestions.handoff import handoff_apply, handoff_undo
from suggestions.models import HandoffDecision
from suggestions.requests import label_requests_draw
from suggestions.selectors import labeling_stored_for_lead, suggestions_for_lead
from suggestions.services import suggestion_job_start


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
        rows = suggestions_for_lead(user=request.user, project_id=project_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(SuggestionListSerializer(page, many=True).data)


class HandoffDecisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = HandoffDecision
        fields = ["id", "action", "rule", "explanation", "figures", "items_affected", "created_at"]
        read_only_fields = fields


class HandoffRequestSerializer(serializers.Serializer):
    basis = serializers.ChoiceField(choices=["blind_agreement", "certification"], default="blind_agreement")


class HandoffApi(APIView):
    """POST hands the remaining items to the LLM when the project's rule allows it; DELETE undoes it."""

    @extend_schema(
        request=HandoffRequestSerializer,
        responses={201: HandoffDecisionSerializer},
        description='basis "blind_agreement" (the project\'s rule, the default) or "certification" (the lower bound '
        "of the model's accuracy from certification requests ≥ the threshold).",
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        data = HandoffRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = handoff_apply(project=project, user=cast(User, request.user), basis=data.validated_data["basis"])
        return Response(HandoffDecisionSerializer(decision).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: HandoffDecisionSerializer})
    def delete(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        decision = handoff_undo(project=project, user=cast(User, request.user))
        return Response(HandoffDecisionSerializer(decision).data)


class SuggestionGenerateSerializer(serializers.Serializer):
    item_ids = serializers.ListField(child=serializers.IntegerField(), required=False, allow_null=True)
    overwrite = serializers.BooleanField(default=False)


class SuggestionGenerateApi(APIView):
    @extend_schema(
        request=SuggestionGenerateSerializer,
        responses={202: OpenApiResponse(JOB_ACCEPTED, description="Poll the job's url for progress.")},
        description="Ask the project's LLM endpoint for suggestions (all items without one, or item_ids).",
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        data = SuggestionGenerateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = suggestion_job_start(
            project=project,
            user=cast(User, request.user),
            item_ids=data.validated_data.get("item_ids"),
            overwrite=data.validated_data["overwrite"],
        )
        return job_accepted(request, job)


class LabelRequestDrawSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=LabelRequest.Kind.choices)
    size = serializers.IntegerField(required=False, allow_null=True, help_text="Items to draw (not for audit).")
    rate = serializers.FloatField(required=False, allow_null=True, help_text="Audit: share of handed-off items.")
    labels_per_item = serializers.IntegerField(default=2)
    by_confidence = serializers.BooleanField(default=False)


class LabelRequestDrawResultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    draw = serializers.IntegerField()
    population = serializers.IntegerField()
    items_drawn = serializers.IntegerField()
    requests = serializers.IntegerField()
    items_unstaffed = serializers.IntegerField()


class LabelRequestApi(APIView):
    @extend_schema(
        request=LabelRequestDrawSerializer,
        responses={201: LabelRequestDrawResultSerializer},
        description=(
            "Draw calibration, certification, audit or verification requests into annotators' queues, reproducibly "
            "from the project seed, each with its inclusion probability. Leads only."
        ),
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        data = LabelRequestDrawSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = label_requests_draw(project=project, user=cast(User, request.user), **data.validated_data)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class ContractsQuerySerializer(serializers.Serializer):
    budget_labels = serializers.IntegerField(required=False, min_value=0, max_value=10_000_000)
    money = serializers.FloatField(required=False, min_value=0)
    reward_per_label = serializers.FloatField(required=False, min_value=0.000001)
    labels_per_item = serializers.FloatField(required=False, min_value=1, max_value=100, default=1)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "budget_labels" in attrs and ("money" in attrs or "reward_per_label" in attrs):
            raise serializers.ValidationError("give budget_labels, or money with reward_per_label, not both")
        if ("money" in attrs) != ("reward_per_label" in attrs):
            raise serializers.ValidationError("money needs reward_per_label (and the other way round)")
        return attrs


class ContractsApi(APIView):
    @extend_schema(
        parameters=[ContractsQuerySerializer],
        responses={200: OpenApiResponse(description="Each contract's verdict, sentence, n and figures.")},
        description=(
            "The contracts beside the handoff threshold (selective risk, no worse than human, distributional, "
            "budget first), each with its verdict (holds, fails, withheld with the reason, or forecast), its "
            "one-sentence guarantee and its n, as last computed. With budget_labels, or money and "
            "reward_per_label, the budget forecast is for that budget. Leads only."
        ),
    )
    def get(self, request: Request, project_id: int) -> Response:
        _, stored = labeling_stored_for_lead(user=request.user, project_id=project_id)
        query = ContractsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        contracts = dict(stored.get("contracts") or {})
        asked = query.validated_data
        if "budget_labels" in asked or "money" in asked:
            contracts["budget_first"] = budget_figure(
                (stored.get("calibration") or {}).get("bins") or [],
                budget_labels=asked.get("budget_labels"),
                money=asked.get("money"),
                reward_per_label=asked.get("reward_per_label"),
                labels_per_item=asked["labels_per_item"],
            )
        return Response({"computed_at": stored.get("computed_at"), "contracts": contracts})
