"""REST API for study links: a lead creates, lists, opens or closes links and exports their participants.

Every view goes through ``project_get_for_lead``: annotators and outsiders get 404.
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.crowd import services as study_services
from annotation.crowd.export import CONTENT_TYPES, FORMATS, participant_export_filename, participant_export_lines
from annotation.crowd.models import StudyLink
from annotation.crowd.selectors import study_link_counts, study_link_get_for_lead, study_link_list_for_lead
from config.input_limits import single_line


class StudyLinkSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    participants = serializers.SerializerMethodField()

    class Meta:
        model = StudyLink
        fields = [
            "id",
            "name",
            "url",
            "token",
            "active",
            "completion_code",
            "screened_out_code",
            "max_participants",
            "items_per_participant",
            "attention_item_ids",
            "attention_from_metadata",
            "attention_every",
            "attention_max_failures",
            "attention_min_answered",
            "skips_count_toward_quota",
            "consent_text",
            "completion_url",
            "return_code",
            "language",
            "participants",
            "created_at",
        ]
        read_only_fields = fields

    def get_url(self, link: StudyLink) -> str:
        request = self.context["request"]
        url = str(request.build_absolute_uri(reverse("study_enter", kwargs={"token": link.token})))
        return f"{url}?lang={link.language}" if link.language else url

    def get_participants(self, link: StudyLink) -> dict[str, int]:
        return dict(self.context.get("counts", {}).get(link.pk, {}))


class StudyLinkCreateSerializer(serializers.Serializer):
    """Shapes only; ranges and the gold of attention items are checked by the service."""

    name = serializers.CharField(max_length=200, validators=[single_line])
    completion_code = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=64, validators=[single_line]
    )
    screened_out_code = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=64, validators=[single_line]
    )
    max_participants = serializers.IntegerField(required=False, allow_null=True, default=None)
    items_per_participant = serializers.IntegerField(required=False, allow_null=True, default=None)
    attention_item_ids = serializers.ListField(
        child=serializers.CharField(max_length=200, validators=[single_line]),
        required=False,
        default=list,
        max_length=10_000,
    )
    attention_from_metadata = serializers.BooleanField(required=False, default=False)
    attention_every = serializers.IntegerField(required=False, default=5)
    attention_max_failures = serializers.IntegerField(required=False, default=0)
    attention_min_answered = serializers.IntegerField(required=False, default=0)
    skips_count_toward_quota = serializers.BooleanField(required=False, default=False)
    consent_text = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=20_000, trim_whitespace=False
    )
    completion_url = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    return_code = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    language = serializers.CharField(required=False, allow_blank=True, default="", max_length=16)


class StudyLinkUpdateSerializer(serializers.Serializer):
    active = serializers.BooleanField()


def _link_data(request: Request, links: list[StudyLink]) -> Any:
    context = {"request": request, "counts": study_link_counts(links=links)}
    return StudyLinkSerializer(links, many=True, context=context).data


class StudyLinkListApi(APIView):
    @extend_schema(responses=StudyLinkSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        _project, links = study_link_list_for_lead(user=request.user, project_id=project_id)
        return Response(_link_data(request, list(links)))

    @extend_schema(request=StudyLinkCreateSerializer, responses={201: StudyLinkSerializer})
    def post(self, request: Request, project_id: int) -> Response:
        project, _links = study_link_list_for_lead(user=request.user, project_id=project_id)
        data = StudyLinkCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        link = study_services.study_link_create(project=project, created_by=request.user, **data.validated_data)
        return Response(_link_data(request, [link])[0], status=status.HTTP_201_CREATED)


class StudyLinkDetailApi(APIView):
    @extend_schema(responses=StudyLinkSerializer)
    def get(self, request: Request, project_id: int, link_id: int) -> Response:
        link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
        return Response(_link_data(request, [link])[0])

    @extend_schema(request=StudyLinkUpdateSerializer, responses=StudyLinkSerializer)
    def patch(self, request: Request, project_id: int, link_id: int) -> Response:
        link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
        data = StudyLinkUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        link = study_services.study_link_set_active(link=link, active=data.validated_data["active"])
        return Response(_link_data(request, [link])[0])


class StudyParticipantExportQuery(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default="jsonl")


class StudyParticipantExportApi(APIView):
    """Per-participant counts and times, streamed as JSON Lines (default) or CSV."""

    # DRF reads ?format= as a renderer override; here it names the export format.
    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=FORMATS, description="jsonl (default) or csv.")],
        responses={(200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="One row a participant")},
    )
    def get(self, request: Request, project_id: int, link_id: int) -> StreamingHttpResponse:
        link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
        query = StudyParticipantExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        export_format = query.validated_data["format"]
        response = StreamingHttpResponse(
            participant_export_lines(link=link, export_format=export_format), content_type=CONTENT_TYPES[export_format]
        )
        filename = participant_export_filename(link=link, export_format=export_format)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
