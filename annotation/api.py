"""REST API for annotations and for the import of existing labels. Thin: shapes here, rules in services.

Annotators create and edit only their own labels (through annotation.services.annotation_save, source "api") and
read only their own; leads read every label of their project; outsiders get 404.
Slider values travel as numbers in [0, 1] that are k/1000 for a whole k, the rule of the page and the database.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Annotation
from annotation.saving import SaveRequest
from annotation.selectors import annotation_created_by_save, annotation_item_id_own, annotations_visible_to
from annotation.services import annotation_save
from config.auth import signed_in_user
from config.input_limits import (
    SafeFormParser,
    SafeMultiPartParser,
    StrictFloatField,
    StrictIntegerField,
    single_line,
    whole_number,
)
from projects.api import (
    JOB_ACCEPTED,
    FileReadingSerializer,
    IdPagination,
    import_job_answer,
    import_options,
    upload_too_large,
)
from projects.formats import NATIVE
from projects.imports.items import RowInvalid, to_permille
from projects.imports.tasks import FORMAT_CHOICES
from projects.models import Job, Project
from projects.selectors import item_get_for_user, project_get_for_lead, project_get_for_user


class ValueSerializer(serializers.Serializer):
    position = StrictIntegerField(min_value=0, help_text="The response's stored position.")
    criterion = serializers.CharField(
        required=False, max_length=100, validators=[single_line], help_text="May be left out when the project has one."
    )
    mu = StrictFloatField(help_text="Support in [0, 1], in thousandths (k/1000).")
    nu = StrictFloatField(help_text="Opposition in [0, 1], in thousandths; μ + ν ≤ 1.")

    def validate_mu(self, value: float) -> int:
        return _permille(value, "mu")

    def validate_nu(self, value: float) -> int:
        return _permille(value, "nu")


def _permille(value: float, what: str) -> int:
    try:
        return to_permille(value, what)
    except RowInvalid as exc:
        raise serializers.ValidationError(str(exc)) from None


class AnnotationWriteSerializer(serializers.Serializer):
    item = StrictIntegerField(help_text="The item's id (see /items/).")
    values = ValueSerializer(many=True, required=False, help_text="IFS projects: every response × criterion.")
    binary_choice = StrictIntegerField(required=False, allow_null=True, help_text="Position, or -1 for a tie.")
    likert_value = StrictIntegerField(required=False, allow_null=True)
    ranking = serializers.ListField(
        child=StrictIntegerField(),
        required=False,
        allow_null=True,
        max_length=26,
        help_text="Binary items of three responses or more: the positions, best first (its head is the choice).",
    )
    both_bad = serializers.BooleanField(
        required=False, default=False, help_text="Binary items of two responses: neither is good (stored as a tie)."
    )
    time_spent_ms = StrictIntegerField(required=False, default=0, min_value=0)
    client_token = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=64,
        validators=[single_line],
        help_text="Repeat it on a retry: one revision, not two.",
    )


class AnnotationEditSerializer(AnnotationWriteSerializer):
    item = None  # type: ignore[assignment]


class AnnotationSerializer(serializers.ModelSerializer):
    item_external_id = serializers.CharField(source="item.external_id")
    annotator = serializers.SerializerMethodField(
        help_text="The member's username, or an imported annotator's name as its file gave it."
    )
    values = serializers.SerializerMethodField()

    class Meta:
        model = Annotation
        fields = [
            "id",
            "item",
            "item_external_id",
            "annotator",
            "mode",
            "response_order",
            "binary_choice",
            "likert_value",
            "ranking",
            "both_bad",
            "values",
            "suggestion_shown",
            "accepted_suggestion",
            "time_spent_ms",
            "revision_count",
            "source",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_annotator(self, annotation: Annotation) -> str:
        identity = getattr(annotation.annotator, "imported_identity", None)
        return identity.external_id if identity is not None else annotation.annotator.get_username()

    @extend_schema(responses=ValueSerializer(many=True))
    def get_values(self, annotation: Annotation) -> list[dict[str, Any]]:
        return [
            {"position": v.response.position, "criterion": v.criterion.name, "mu": v.mu / 1000, "nu": v.nu / 1000}
            for v in annotation.values.all()
        ]


class LabelImportSerializer(FileReadingSerializer):
    file = serializers.FileField(help_text="JSON Lines of labels (see annotation.imports.labels for the row shape).")
    format = serializers.ChoiceField(
        choices=FORMAT_CHOICES,
        default=NATIVE,
        help_text="Penumbra's own rows, the file of another tool, or auto (detected from the first record).",
    )
    skip_invalid = serializers.BooleanField(default=False)
    allow_members = serializers.BooleanField(
        default=False, help_text="A name that is the username of an annotator of this project files under them."
    )
    allow_leads = serializers.BooleanField(
        default=False, help_text="A name that is the username of a lead of this project files under them."
    )
    dry_run = serializers.BooleanField(
        default=False, help_text="Check every record and report what would happen, writing nothing."
    )


def _service_values(project: Project, values: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    if values is None:
        return None
    names = list(project.criteria.values_list("name", flat=True))
    default = names[0] if len(names) == 1 else None
    return [
        {"response": v["position"], "criterion": v.get("criterion", default), "mu": v["mu"], "nu": v["nu"]}
        for v in values
    ]


def _save(request: Request, project: Project, item_id: int, data: dict[str, Any]) -> Annotation:
    item = item_get_for_user(user=request.user, project=project, item_id=item_id)
    return annotation_save(
        project=project,
        item=item,
        annotator=signed_in_user(request),
        save=SaveRequest(
            values=_service_values(project, data.get("values")),
            binary_choice=data.get("binary_choice"),
            likert_value=data.get("likert_value"),
            ranking=data.get("ranking"),
            both_bad=data.get("both_bad", False),
            client_token=data.get("client_token"),
            time_spent_ms=data.get("time_spent_ms", 0),
            reason="api",
            source="api",
        ),
    )


class AnnotationListApi(APIView):
    pagination_class = IdPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("item", int, description="Only labels of this item."),
            OpenApiParameter("annotator", str, description="Leads: only this annotator's labels."),
        ],
        responses=AnnotationSerializer(many=True),
    )
    def get(self, request: Request, project_id: int) -> Response:
        item = request.query_params.get("item", "")
        annotations = annotations_visible_to(
            user=request.user,
            project_id=project_id,
            item_id=whole_number(item),
            annotator_username=request.query_params.get("annotator", ""),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(annotations, request, view=self)
        return paginator.get_paginated_response(AnnotationSerializer(page, many=True).data)

    @extend_schema(
        request=AnnotationWriteSerializer,
        responses={201: AnnotationSerializer, 200: AnnotationSerializer},
        description="Create your label of an item, or replace it (a new revision). Annotators only.",
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_user(user=request.user, project_id=project_id)
        data = AnnotationWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        annotation = _save(request, project, data.validated_data["item"], data.validated_data)
        created = annotation_created_by_save(
            annotation=annotation, client_token=data.validated_data.get("client_token")
        )
        body = AnnotationSerializer(
            annotations_visible_to(user=request.user, project_id=project.pk).get(pk=annotation.pk)
        ).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class AnnotationDetailApi(APIView):
    @extend_schema(responses=AnnotationSerializer)
    def get(self, request: Request, project_id: int, annotation_id: int) -> Response:
        annotation = annotations_visible_to(user=request.user, project_id=project_id).filter(pk=annotation_id).first()
        if annotation is None:
            return Response({"detail": "Not found.", "errors": {}}, status=status.HTTP_404_NOT_FOUND)
        return Response(AnnotationSerializer(annotation).data)

    @extend_schema(request=AnnotationEditSerializer, responses=AnnotationSerializer)
    def put(self, request: Request, project_id: int, annotation_id: int) -> Response:
        project = project_get_for_user(user=request.user, project_id=project_id)
        item_id = annotation_item_id_own(user=request.user, project=project, annotation_id=annotation_id)
        if item_id is None:
            return Response({"detail": "Not found.", "errors": {}}, status=status.HTTP_404_NOT_FOUND)
        data = AnnotationEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        annotation = _save(request, project, item_id, data.validated_data)
        visible = annotations_visible_to(user=request.user, project_id=project.pk)
        return Response(AnnotationSerializer(visible.get(pk=annotation.pk)).data)


class LabelImportApi(APIView):
    parser_classes = [SafeMultiPartParser, SafeFormParser]

    @extend_schema(
        request={"multipart/form-data": LabelImportSerializer},
        responses={
            202: OpenApiResponse(JOB_ACCEPTED, description="Poll the job's url for progress and errors."),
            413: OpenApiResponse(description="The file is over IMPORT_MAX_UPLOAD_MB."),
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        if (refused := upload_too_large(request)) is not None:
            return refused
        data = LabelImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = import_options(data.validated_data)
        return import_job_answer(
            request, project=project, kind=Job.Kind.IMPORT_LABELS, upload=data.validated_data["file"], options=options
        )
