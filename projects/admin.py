from django.contrib import admin

from projects.models import (
    Criterion,
    Item,
    Job,
    Membership,
    Project,
    Response,
    Suggestion,
    SuggestionValue,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


class CriterionInline(admin.TabularInline):
    model = Criterion
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "mode", "phase", "suggestion_display", "overlap", "created_at"]
    list_filter = ["mode", "phase", "suggestion_display"]
    search_fields = ["name", "slug"]
    inlines = [CriterionInline, MembershipInline]


class ResponseInline(admin.StackedInline):
    model = Response
    extra = 0


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "is_blind", "annotation_count", "gold_position"]
    list_filter = ["project", "is_blind"]
    search_fields = ["external_id", "prompt"]
    readonly_fields = ["blind_draw", "is_blind", "blind_inclusion_probability", "queue_key", "annotation_count"]
    inlines = [ResponseInline]


class SuggestionValueInline(admin.TabularInline):
    model = SuggestionValue
    extra = 0
    raw_id_fields = ["response"]


@admin.register(Suggestion)
class SuggestionAdmin(admin.ModelAdmin):
    list_display = ["item", "status", "preferred_position", "model_name", "source"]
    list_filter = ["status", "source"]
    raw_id_fields = ["item"]
    inlines = [SuggestionValueInline]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "kind", "status", "progress_done", "progress_total", "created_at"]
    list_filter = ["kind", "status"]
