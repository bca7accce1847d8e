from django.contrib import admin

from suggestions.models import HandoffDecision


@admin.register(HandoffDecision)
class HandoffDecisionAdmin(admin.ModelAdmin):
    list_display = ["project", "action", "rule", "items_affected", "created_at"]
    list_filter = ["action"]
