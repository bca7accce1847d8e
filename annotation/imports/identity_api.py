"""REST API for a project's imported annotators: list them, link one to a real member. Thin: rules in
projects.imports.annotators and annotation.imports.identities."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imports.identities import imported_annotator_link
from config.input_limits import SafeJSONParser
from projects.imports.selectors import identity_get_for_lead, imported_annotators_for_lead
from projects.models import ImportedAnnotator


class ImportedAnnotatorSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(read_only=True, help_text="The login-less user its labels are filed under.")
    linked_member = serializers.SerializerMethodField()

    class Meta:
        model = ImportedAnnotator
        fields = ["id", "source", "external_id", "user_id", "linked_member", "created_at", "linked_at"]
        read_only_fields = fields

    @extend_schema_field(
        inline_serializer(
            name="LinkedMember",
            fields={"id": serializers.IntegerField(), "username": serializers.CharField()},
            allow_null=True,
        )
    )
    def get_linked_member(self, identity: ImportedAnnotator) -> dict[str, object] | None:
        member = identity.linked_member
        return None if member is None else {"id": member.pk, "username": member.get_username()}


class LinkSerializer(serializers.Serializer):
    member = serializers.IntegerField(min_value=1, help_text="The user id of a member of this project.")


class ImportedAnnotatorListApi(APIView):
    @extend_schema(responses=ImportedAnnotatorSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        _, identities = imported_annotators_for_lead(user=request.user, project_id=project_id)
        return Response(ImportedAnnotatorSerializer(identities, many=True).data)


class ImportedAnnotatorLinkApi(APIView):
    parser_classes = [SafeJSONParser]

    @extend_schema(
        request=LinkSerializer,
        responses=ImportedAnnotatorSerializer,
        description="Move the identity's labels to the member; later imports of the name file under the member.",
    )
    def post(self, request: Request, project_id: int, identity_id: int) -> Response:
        project, identity = identity_get_for_lead(user=request.user, project_id=project_id, identity_id=identity_id)
        data = LinkSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        linked = imported_annotator_link(
            project=project, identity_id=identity.pk, member_id=data.validated_data["member"]
        )
        return Response(ImportedAnnotatorSerializer(linked).data)
