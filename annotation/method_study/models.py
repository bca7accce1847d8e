"""A method study (crossover design) and its stored plan: which annotator judges which item with which method,
in which block and at which place in their session. Imported by ``annotation.models`` so Django finds them.

The plan is written once when a lead sets the study up (``annotation.method_study.services``) and never changed, so
it is the audit record of the design; the labels themselves are ordinary annotations whose ``mode`` is the method.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Item, Project


class MethodStudy(models.Model):
    """A project in crossover mode compares ``methods`` (project modes: ifs, binary, likert) on the same people."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="method_study")
    methods = models.JSONField(help_text="Project modes compared, in the order the design numbers them.")
    block_size = models.PositiveIntegerField()
    # The project's mode before the study, restored if a lead ends the study.
    previous_mode = models.CharField(max_length=10, default="ifs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(block_size__gte=1), name="method_study_block_positive")]

    def __str__(self) -> str:
        return f"Method study of {self.project}"


class StudyCell(models.Model):
    """One planned judgment of the design."""

    study = models.ForeignKey(MethodStudy, on_delete=models.CASCADE, related_name="cells")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    method = models.CharField(max_length=10)
    # The annotator's period (0-based): which of their blocks this is.
    block = models.PositiveSmallIntegerField()
    # Place in the annotator's session (0-based): the queue serves the lowest open one.
    sequence = models.PositiveIntegerField()
    # The Williams row (method order) this annotator follows.
    order_row = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study_id", "annotator_id", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator", "item"], name="study_cell_unique_item"),
            models.UniqueConstraint(fields=["study", "annotator", "sequence"], name="study_cell_unique_sequence"),
        ]
