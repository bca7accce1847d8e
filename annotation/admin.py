from django.contrib import admin

from annotation.crowd.models import Participant, StudyLink
from annotation.models import Annotation, AnnotationRevision, Assignment, JudgmentValue, SuggestionExposure


class JudgmentValueInline(admin.TabularInline):
    model = JudgmentValue
    extra = 0
    raw_id_fields = ["response", "criterion"]


class RevisionInline(admin.TabularInline):
    model = AnnotationRevision
    extra = 0
    readonly_fields = ["number", "payload", "suggestion_shown", "client_token", "reason", "created_at"]
    can_delete = False


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "mode", "suggestion_shown", "accepted_suggestion", "updated_at"]
    list_filter = ["project", "mode", "suggestion_shown"]
    raw_id_fields = ["item", "annotator"]
    inlines = [JudgmentValueInline, RevisionInline]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "status", "expires_at"]
    list_filter = ["status"]
    raw_id_fields = ["item", "annotator"]


@admin.register(SuggestionExposure)
class SuggestionExposureAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "kind", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["item", "annotator"]


@admin.register(StudyLink)
class StudyLinkAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "active", "max_participants", "items_per_participant", "created_at"]
    list_filter = ["active"]
    raw_id_fields = ["project", "created_by"]


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["external_id", "link", "status", "started_at", "finished_at", "code_shown_at"]
    list_filter = ["status"]
    search_fields = ["external_id", "study_id", "session_id"]
    raw_id_fields = ["link", "user"]
