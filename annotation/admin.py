from django.contrib import admin

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
