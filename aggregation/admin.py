from django.contrib import admin

from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate


@admin.register(ItemAggregate)
class ItemAggregateAdmin(admin.ModelAdmin):
    list_display = ["item", "provenance", "best_position", "margin", "hesitation", "agreement", "n_annotators"]
    list_filter = ["project", "provenance"]
    raw_id_fields = ["item"]


@admin.register(AnnotatorAggregate)
class AnnotatorAggregateAdmin(admin.ModelAdmin):
    list_display = ["annotator", "project", "weight", "consistency", "expertise", "agreement", "n_labels"]
    list_filter = ["project"]


@admin.register(ProjectAggregate)
class ProjectAggregateAdmin(admin.ModelAdmin):
    list_display = ["project", "computed_at"]
