"""An annotator's work: claims on items, annotations with their values, revisions and suggestion exposures.

Values are integer per-mille and responses are named by stored position (see projects.models).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from projects.models import PERMILLE, TIE, Criterion, Item, Project, Response


class Assignment(models.Model):
    """One annotator's hold on one item: the claim (lease), the response order drawn for them, skips.

    It outlives the claim: the stored ``response_order`` is what this annotator always sees for this item.
    """

    class Status(models.TextChoices):
        CLAIMED = "claimed", "Claimed"
        DONE = "done", "Done"
        SKIPPED = "skipped", "Skipped"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.CLAIMED)
    response_order = models.JSONField(help_text="Stored positions in the order shown, left to right.")
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    skip_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["annotator", "item"], name="assignment_unique")]
        indexes = [
            models.Index(fields=["item", "status", "expires_at"], name="assignment_claim_idx"),
            models.Index(fields=["project", "annotator", "status", "updated_at"], name="assignment_history_idx"),
        ]


class Annotation(models.Model):
    """One annotator's current judgment of one item. Every save also appends an AnnotationRevision."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations")
    mode = models.CharField(max_length=10, choices=Project.Mode.choices)
    response_order = models.JSONField(help_text="Stored positions in the order the annotator saw them.")
    # Binary: preferred stored position, or TIE. Likert: 1..k, 1 = the response at position 0 strongly preferred.
    binary_choice = models.SmallIntegerField(null=True, blank=True)
    likert_value = models.PositiveSmallIntegerField(null=True, blank=True)
    # True once any suggestion exposure of this item to this annotator preceded a save: never blind again.
    suggestion_shown = models.BooleanField(default=False)
    accepted_suggestion = models.BooleanField(default=False)
    time_spent_ms = models.PositiveIntegerField(default=0)
    revision_count = models.PositiveIntegerField(default=0)
    source = models.CharField(max_length=10, default="page", help_text="page, api or import")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "item"], name="annotation_unique_per_annotator"),
            models.CheckConstraint(condition=Q(binary_choice__gte=TIE), name="annotation_binary_choice_valid"),
            models.CheckConstraint(
                condition=Q(likert_value__gte=1, likert_value__lte=11), name="annotation_likert_range"
            ),
        ]
        indexes = [
            models.Index(fields=["project", "updated_at"], name="annotation_recent_idx"),
            models.Index(fields=["item", "updated_at"], name="annotation_item_idx"),
        ]


class JudgmentValue(models.Model):
    """(μ, ν) in per-mille for one response under one criterion. The database refuses anything not an IFS."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="values")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")
    mu = models.SmallIntegerField()
    nu = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotation", "response", "criterion"], name="judgment_value_unique"),
            models.CheckConstraint(condition=Q(mu__gte=0), name="judgment_mu_non_negative"),
            models.CheckConstraint(condition=Q(nu__gte=0), name="judgment_nu_non_negative"),
            models.CheckConstraint(condition=Q(mu__lte=PERMILLE - F("nu")), name="judgment_mu_plus_nu_at_most_one"),
        ]


class AnnotationRevision(models.Model):
    """Append-only history: the full judgment as saved, so nothing is overwritten without a trace."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    payload = models.JSONField(help_text="The whole judgment: values, choice, likert, flags.")
    suggestion_shown = models.BooleanField(default=False)
    accepted_suggestion = models.BooleanField(default=False)
    time_spent_ms = models.PositiveIntegerField(default=0)
    # A form carries a token; a repeated post with the same token (double click, retry) is the same revision.
    client_token = models.CharField(max_length=64, null=True, blank=True)
    reason = models.CharField(max_length=20, default="save", help_text="save, resolution, api, import")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["annotation_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "number"], name="revision_unique_number"),
            models.UniqueConstraint(
                fields=["annotation", "client_token"],
                condition=Q(client_token__isnull=False),
                name="revision_unique_client_token",
            ),
        ]


class SuggestionExposure(models.Model):
    """A row each time an annotator is shown an item's suggestion. Blind means: none before the save."""

    class Kind(models.TextChoices):
        BEFORE_LABEL = "before_label", "Shown with the item"
        RESOLUTION = "resolution", "Shown on the after-label resolution step"
        ACCEPT = "accept", "Accepted with the Accept button"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exposures")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="exposures")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="exposures")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["annotator", "item", "created_at"], name="exposure_lookup_idx")]


class ItemNote(models.Model):
    """A note on one item: an annotator's flag for the lead (open until a lead resolves it) or a lead's comment."""

    class Kind(models.TextChoices):
        FLAG = "flag", "Flag for the lead"
        COMMENT = "comment", "Lead's comment"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="item_notes")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    text = models.TextField(max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(text=""), name="item_note_text_set"),
            models.CheckConstraint(
                condition=Q(kind="flag") | Q(resolved_at__isnull=True), name="item_note_only_flags_resolve"
            ),
        ]
        indexes = [models.Index(fields=["project", "kind", "resolved_at"], name="item_note_open_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.item}"
