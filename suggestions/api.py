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
from suggestions.handoff import handoff_apply, handoff_undo
from suggestions.models import HandoffDecision
from suggestions.requests import label_requests_draw
from suggestions.selectors import suggestions_for_lead
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
