"""REST API for projects, members, criteria, items, item imports and jobs. Thin: shapes here, rules in services.

Every project read goes through projects.selectors, so a user outside a project gets 404 whatever they ask for.
Annotators never receive a suggestion through the API: the annotation page is the one place that shows suggestions,
because it records each exposure; a suggestion sent to a script could be shown without a trace and would make the
blind/shown flags of later labels untrue.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.auth import signed_in_user
from config.input_limits import SafeFormParser, SafeJSONParser, SafeMultiPartParser, single_line
from projects.formats import NATIVE, RATINGS_RULES, RESPONSE_STATUSES, OptionsInvalid, options_from
from projects.imports.tasks import (
    FORMAT_CHOICES,
    UploadTooLarge,
    import_job_start,
    upload_limit_bytes,
    upload_too_large_message,
)
from projects.models import Criterion, Item, Job, Membership, Project
from projects.selectors import (
    criteria_for_member,
    item_for_member,
    items_for_member,
    job_get_for_lead,
    jobs_for_lead,
    members_for_lead,
    project_create_allowed,
    project_get_for_lead,
    project_get_for_user,
    project_role_get,
    projects_with_roles_for_user,
    user_by_username,
)
from projects.services import EDITABLE_SETTINGS, criteria_set, membership_set, project_create, project_update

# Never sent back: the LLM key is a secret a lead can set but nobody reads through the API.
SECRET_SETTINGS = ("llm_api_key",)


class IdPagination(CursorPagination):
    ordering = "id"
    page_size = 100
    max_page_size = 1000
    page_size_query_param = "page_size"


# ---- serializers: shapes only -------------------------------------------------------------------------------------


class CriterionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Criterion
        fields = ["name", "weight", "description"]
        # The weights must sum to 1, so a missing one cannot quietly take the model's default.
        extra_kwargs = {"weight": {"required": True}}


class ProjectSerializer(serializers.ModelSerializer):
    criteria = CriterionSerializer(many=True, read_only=True)
    role = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "id",
            "slug",
            "phase",
            "labelling_started_at",
            "created_at",
            "role",
            "criteria",
            *(f for f in EDITABLE_SETTINGS if f not in SECRET_SETTINGS),
        ]
        read_only_fields = fields

    def get_role(self, project: Project) -> str | None:
        return self.context.get("roles", {}).get(project.pk)


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, validators=[single_line])
    criteria = CriterionSerializer(many=True, required=False)
    settings = serializers.DictField(required=False, help_text="Any of the editable settings, e.g. mode, overlap.")

    def validate_settings(self, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(EDITABLE_SETTINGS) | ({"name"} & set(value)))
        if unknown:
            raise serializers.ValidationError(f"Unknown settings: {', '.join(unknown)}.")
        return value


class ProjectSettingsSerializer(serializers.Serializer):
    """Partial settings: the service checks ranges and the locked-after-labelling rules."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object of settings."]})
        return dict(data)


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username", validators=[single_line])
    role = serializers.ChoiceField(choices=Membership.Role.choices)


class ResponseSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    text = serializers.CharField()
    model = serializers.CharField(source="model_name")


class SuggestionSerializer(serializers.Serializer):
    status = serializers.CharField()
    preferred_position = serializers.IntegerField(allow_null=True)
    rationale = serializers.CharField()
    model = serializers.CharField(source="model_name")
    # A field named like Field.source: DRF's metaclass moves declared fields out of the class, so they never clash.
    source = serializers.CharField()  # type: ignore[assignment]
    values = serializers.SerializerMethodField()

    def get_values(self, suggestion: Any) -> list[dict[str, Any]]:
        return [
            {"position": v.response.position, "mu": v.mu / 1000, "nu": v.nu / 1000} for v in suggestion.values.all()
        ]


class DocumentedResponseSerializer(ResponseSerializer):
    model = serializers.CharField(source="model_name", required=False, help_text="Leads only.")


class AnnotatorResponseSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    text = serializers.CharField()


class ItemSerializer(serializers.Serializer):
    """What every member sees of an item: of what was imported, only the prompt and the responses' texts (a model's
    name or any metadata could sway a judgment; they are the lead's)."""

    id = serializers.IntegerField()
    external_id = serializers.CharField()
    prompt = serializers.CharField()
    responses = AnnotatorResponseSerializer(many=True)


class LeadItemSerializer(ItemSerializer):
    """Leads also see the responses' models, the metadata, the blind flag, gold, its lead-only metadata, label
    count and the suggestion."""

    responses = ResponseSerializer(many=True)  # type: ignore[assignment]
    metadata = serializers.JSONField()
    lead_metadata = serializers.JSONField()
    is_blind = serializers.BooleanField()
    blind_inclusion_probability = serializers.FloatField(allow_null=True)
    gold_position = serializers.IntegerField(allow_null=True)
    annotation_count = serializers.IntegerField()
    suggestion = serializers.SerializerMethodField()

    @extend_schema(responses=SuggestionSerializer(allow_null=True))
    def get_suggestion(self, item: Item) -> dict[str, Any] | None:
        suggestion = getattr(item, "suggestion", None)
        return None if suggestion is None else SuggestionSerializer(suggestion).data


class JobSerializer(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = [
            "id",
            "project",
            "kind",
            "status",
            "options",
            "progress_done",
            "progress_total",
            "result",
            "errors",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class FileReadingSerializer(serializers.Serializer):
    """How to read another tool's file, where the file alone does not say (projects.formats.Options)."""

    scheme = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The scheme (Potato), control (Label Studio from_name) or question (Argilla) to read.",
    )
    ratings_rule = serializers.ChoiceField(
        choices=RATINGS_RULES,
        default="refuse",
        help_text="One rating per response becomes: nothing (refuse), a binary label for the higher-rated response, "
        "or a Likert point from the difference.",
    )
    statuses = serializers.MultipleChoiceField(
        choices=RESPONSE_STATUSES,
        required=False,
        help_text="Argilla responses that count (submitted by default; unknown: files that write no status).",
    )
    items_key = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Potato: the data key holding the responses."
    )
    scale = serializers.CharField(
        required=False, allow_blank=True, max_length=40, help_text="Potato: the pairwise scale, as min..max (1..6)."
    )

    def validate_statuses(self, value: set[str]) -> list[str]:
        return [status for status in RESPONSE_STATUSES if status in value]  # a JSON list, in a stable order

    def validate_scale(self, value: str) -> str:
        try:
            options_from({"scale": value})
        except OptionsInvalid as exc:
            raise serializers.ValidationError(exc.errors["scale"]) from None
        return value


class ImportUploadSerializer(FileReadingSerializer):
    file = serializers.FileField(help_text="JSON Lines, one item per line, or another tool's file (see format).")
    format = serializers.ChoiceField(
        choices=FORMAT_CHOICES,
        default=NATIVE,
        help_text="Penumbra's own rows, the file of another tool, or auto (detected from the first record).",
    )
    on_duplicate = serializers.ChoiceField(choices=["reject", "update", "skip"], default="reject")
    skip_invalid = serializers.BooleanField(default=False)
    trl_chosen_as = serializers.ChoiceField(choices=["gold", "suggestion", "none"], default="gold")
    dry_run = serializers.BooleanField(
        default=False,
        help_text="Check every record and report what would happen (with the detected format and a preview of the "
        "first rows), writing nothing.",
    )


def import_options(validated: dict[str, Any]) -> dict[str, Any]:
    """The job's options from an import upload's fields (the reading options by name, projects.formats.Options)."""
    return {k: v for k, v in validated.items() if k != "file" and v not in (None, "")}


def upload_too_large(request: Request) -> Response | None:
    """413 before the body is read when the request says it is over the limit (the service checks the file too)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    # A multipart body carries a little more than the file: headers and boundaries.
    if length > upload_limit_bytes() + 64 * 1024:
        return too_large_response(upload_too_large_message(length))
    return None


def too_large_response(message: str) -> Response:
    return Response({"detail": message, "errors": {"file": [message]}}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)


def import_job_answer(
    request: Request, *, project: Project, kind: str, upload: Any, options: dict[str, Any]
) -> Response:
    """Start the import job and answer 202, or 413 for a file over the limit."""
    try:
        job = import_job_start(project=project, user=signed_in_user(request), kind=kind, upload=upload, options=options)
    except UploadTooLarge as too_large:
        return too_large_response(" ".join(too_large.messages))
    return job_accepted(request, job)


JOB_ACCEPTED = inline_serializer(
    name="JobAccepted", fields={"job": serializers.IntegerField(), "url": serializers.CharField()}
)


def job_accepted(request: Request, job: Job) -> Response:
    return Response(
        {"job": job.pk, "url": request.build_absolute_uri(f"/api/jobs/{job.pk}/")}, status=status.HTTP_202_ACCEPTED
    )


# ---- views --------------------------------------------------------------------------------------------------------


PROJECT_CREATE_REFUSED = (
    'Creating projects is open to staff and to accounts granted the "Can add project" permission; ask an '
    "administrator to grant it, or a lead to add you to their project."
)


class ProjectListApi(APIView):
    @extend_schema(responses=ProjectSerializer(many=True))
    def get(self, request: Request) -> Response:
        projects, roles = projects_with_roles_for_user(user=request.user)
        return Response(ProjectSerializer(projects, many=True, context={"roles": roles}).data)

    @extend_schema(
        request=ProjectCreateSerializer,
        responses={201: ProjectSerializer, 403: OpenApiResponse(description=PROJECT_CREATE_REFUSED)},
    )
    def post(self, request: Request) -> Response:
        if not project_create_allowed(request.user):
            raise PermissionDenied(PROJECT_CREATE_REFUSED)
        data = ProjectCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        criteria = [(c["name"], c["weight"]) for c in data.validated_data.get("criteria", [])] or [("overall", 1.0)]
        project = project_create(
            name=data.validated_data["name"],
            lead=signed_in_user(request),
            criteria=criteria,
            **data.validated_data.get("settings", {}),
        )
        body = ProjectSerializer(project, context={"roles": {project.pk: Membership.Role.LEAD}}).data
        return Response(body, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    @extend_schema(responses=ProjectSerializer)
    def get(self, request: Request, project_id: int) -> Response:
        project = project_get_for_user(user=request.user, project_id=project_id)
        role = project_role_get(user=request.user, project=project)
        return Response(ProjectSerializer(project, context={"roles": {project.pk: role}}).data)

    @extend_schema(request=ProjectSettingsSerializer, responses=ProjectSerializer)
    def patch(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        changes = ProjectSettingsSerializer(data=request.data)
        changes.is_valid(raise_exception=True)
        project = project_update(project=project, changes=changes.validated_data)
        return Response(ProjectSerializer(project, context={"roles": {project.pk: Membership.Role.LEAD}}).data)


class CriteriaApi(APIView):
    @extend_schema(responses=CriterionSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        return Response(
            CriterionSerializer(criteria_for_member(user=request.user, project_id=project_id), many=True).data
        )

    @extend_schema(request=CriterionSerializer(many=True), responses=CriterionSerializer(many=True))
    def put(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        data = CriterionSerializer(data=request.data, many=True)
        data.is_valid(raise_exception=True)
        criteria = criteria_set(project=project, criteria=[(c["name"], c["weight"]) for c in data.validated_data])
        return Response(CriterionSerializer(criteria, many=True).data)


class MemberListApi(APIView):
    @extend_schema(responses=MemberSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        members = members_for_lead(user=request.user, project_id=project_id)
        return Response(MemberSerializer(members, many=True).data)

    @extend_schema(request=MemberSerializer, responses={201: MemberSerializer})
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        data = MemberSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = user_by_username(username=data.validated_data["user"]["username"])
        if user is None:
            raise serializers.ValidationError({"username": ["No user with this name."]})
        membership = membership_set(project=project, user=user, role=data.validated_data["role"])
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


class ItemForMemberSerializer(ItemSerializer):
    """The documented item: the lead-only fields are present for leads and absent for annotators."""

    responses = DocumentedResponseSerializer(  # type: ignore[assignment]
        many=True, help_text="Annotators get position and text; leads also the model."
    )
    metadata = serializers.JSONField(required=False)
    lead_metadata = serializers.JSONField(required=False)
    is_blind = serializers.BooleanField(required=False)
    blind_inclusion_probability = serializers.FloatField(allow_null=True, required=False)
    gold_position = serializers.IntegerField(allow_null=True, required=False)
    annotation_count = serializers.IntegerField(required=False)
    suggestion = SuggestionSerializer(allow_null=True, required=False)


class ItemListApi(APIView):
    pagination_class = IdPagination

    @extend_schema(
        responses=ItemForMemberSerializer(many=True), description="Leads also get is_blind, gold, suggestion."
    )
    def get(self, request: Request, project_id: int) -> Response:
        items, lead = items_for_member(user=request.user, project_id=project_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(items, request, view=self)
        serializer = LeadItemSerializer if lead else ItemSerializer
        return paginator.get_paginated_response(serializer(page, many=True).data)


class ItemDetailApi(APIView):
    @extend_schema(responses=ItemForMemberSerializer, description="Leads also get is_blind, gold, suggestion.")
    def get(self, request: Request, project_id: int, item_id: int) -> Response:
        item, lead = item_for_member(user=request.user, project_id=project_id, item_id=item_id)
        serializer = LeadItemSerializer if lead else ItemSerializer
        return Response(serializer(item).data)


class ItemImportApi(APIView):
    parser_classes = [SafeMultiPartParser, SafeFormParser]

    @extend_schema(
        request={"multipart/form-data": ImportUploadSerializer},
        responses={
            202: OpenApiResponse(JOB_ACCEPTED, description="Poll the job's url for progress and errors."),
            413: OpenApiResponse(description="The file is over IMPORT_MAX_UPLOAD_MB."),
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = project_get_for_lead(user=request.user, project_id=project_id)
        if (refused := upload_too_large(request)) is not None:
            return refused
        data = ImportUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = import_options(data.validated_data)
        return import_job_answer(
            request, project=project, kind=Job.Kind.IMPORT_ITEMS, upload=data.validated_data["file"], options=options
        )


class JobListApi(APIView):
    pagination_class = IdPagination

    @extend_schema(responses=JobSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(jobs_for_lead(user=request.user, project_id=project_id), request, view=self)
        return paginator.get_paginated_response(JobSerializer(page, many=True).data)


class JobDetailApi(APIView):
    parser_classes = [SafeJSONParser]

    @extend_schema(responses=JobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(JobSerializer(job_get_for_lead(user=request.user, job_id=job_id)).data)
