"""The model's side keeps one table of its own: the handoff decisions. Suggestions themselves stay in ``projects``
(the item import writes them and the annotation page reads them, both below this app); the figures built from them
are stored on ``aggregation.ProjectAggregate.suggestions``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from projects.models import Project


class HandoffDecision(models.Model):
    """Every handoff evaluation that changed state, every handoff and every undo, with the figures behind it."""

    class Action(models.TextChoices):
        HANDED_OFF = "handed_off", "Handed the remaining items to the LLM"
        UNDONE = "undone", "Handoff undone"
        ELIGIBLE = "eligible", "Became eligible"
        NOT_ELIGIBLE = "not_eligible", "Not eligible"
        SUSPENDED = "suspended", "Suspended by the audit"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="handoff_decisions")
    action = models.CharField(max_length=14, choices=Action.choices)
    rule = models.CharField(max_length=12, choices=Project.HandoffRule.choices)
    explanation = models.TextField()
    figures = models.JSONField(default=dict)
    items_affected = models.PositiveIntegerField(default=0)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # The table it had when aggregation owned it: the move changed no row.
        db_table = "aggregation_handoffdecision"
