"""An annotator's work: claims on items, annotations with their values, revisions and suggestion exposures.

Values are integer per-mille and responses are named by stored position (see projects.models).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Func, IntegerField, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.db.models.lookups import Exact, GreaterThanOrEqual

from projects.models import PERMILLE, TIE, Criterion, Item, JsonbTypeof, Project, Response


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


class RankingLength(Func):
    """The length of a JSON array, for the ranking's constraint: PostgreSQL's jsonb_array_length, and SQLite's
    json_array_length (the embedded default)."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return self.as_sql(compiler, connection, function="json_array_length", **extra_context)


class Annotation(models.Model):
    """One annotator's current judgment of one item. Every save also appends an AnnotationRevision."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations")
    mode = models.CharField(max_length=10, choices=Project.Mode.choices)
    response_order = models.JSONField(help_text="Stored positions in the order the annotator saw them.")
    # An imported label without a screen order gets the stored order as a placeholder: it is not evidence of what the
    # annotator saw, so position bias leaves it out.
    order_known = models.BooleanField(
        default=True, db_default=True, help_text="False: imported without its screen order (response_order is a guess)."
    )
    # Binary: preferred stored position, or TIE. Likert: 1..k, 1 = the response at position 0 strongly preferred.
    binary_choice = models.SmallIntegerField(null=True, blank=True)
    likert_value = models.PositiveSmallIntegerField(null=True, blank=True)
    # Binary, three responses or more: the full order, stored positions best first (annotation.checks.check_ranking).
    # Its head is the binary choice, so every binary figure reads a ranking as its pick and k = 2 is untouched.
    ranking = models.JSONField(null=True, blank=True)
    # Binary: "both bad", a tie for every preference figure (binary_choice is TIE) that the dashboard and the KTO
    # export keep apart from a tie between two good answers.
    both_bad = models.BooleanField(default=False, db_default=False)
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
            # A ranking is a list of at least three positions whose head is the binary choice.
            models.CheckConstraint(
                condition=Q(ranking__isnull=True)
                | Q(
                    Exact(JsonbTypeof(F("ranking")), "array"),
                    GreaterThanOrEqual(RankingLength(F("ranking")), 3),
                    Exact(Cast(KeyTextTransform("0", "ranking"), IntegerField()), F("binary_choice")),
                ),
                name="annotation_ranking_heads_the_choice",
            ),
            models.CheckConstraint(
                condition=Q(both_bad=False) | Q(mode="binary", binary_choice=TIE, ranking__isnull=True),
                name="annotation_both_bad_is_a_binary_tie",
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
    time_on_item_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Accept: the page's visible time on the item when Accept was clicked."
    )
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


class LabelRequest(models.Model):
    """A unit of work the labelling engine puts in one person's queue: label this item blind (calibration,
    certification, audit) or keep or change the model's answer (verification).

    Drawn by ``suggestions.requests`` (the draw and its ``inclusion_probability`` are recorded here, so the
    estimators can weight the answer by 1/π); answered by the person's ordinary save of the item. The row lives on
    the queue's floor because the queue serves it and ``annotation.selectors.suggestion_visible_for`` must see it:
    while a person holds a calibration, certification or audit request for an item (and after they answer it),
    nothing of the model's answer for that item reaches them.
    """

    class Kind(models.TextChoices):
        CALIBRATION = "calibration", "Calibration"
        CERTIFICATION = "certification", "Certification"
        AUDIT = "audit", "Audit"
        VERIFICATION = "verification", "Verification"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ANSWERED = "answered", "Answered"
        WITHDRAWN = "withdrawn", "Withdrawn"

    #: Kinds whose answers are blind evidence about the model (drawn with a recorded inclusion probability).
    BLIND_KINDS = (Kind.CALIBRATION, Kind.CERTIFICATION, Kind.AUDIT)

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="label_requests")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="label_requests")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_requests")
    kind = models.CharField(max_length=13, choices=Kind.choices)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.OPEN)
    inclusion_probability = models.FloatField(
        null=True, blank=True, help_text="π of the item in the draw; null for verification (not a random draw)."
    )
    stratum = models.SmallIntegerField(null=True, blank=True, help_text="Confidence bin of the draw, if stratified.")
    confidence = models.FloatField(null=True, blank=True, help_text="The model's stated confidence for the item.")
    draw = models.PositiveIntegerField(default=1, help_text="Which draw of this kind (1, 2, …).")
    machine_preferred = models.SmallIntegerField(
        null=True, blank=True, help_text="The model's answer (stored position, or -1 for a tie) when drawn."
    )
    prefilled = models.BooleanField(default=False, help_text="Verification: the model's answer was on screen.")
    final_preferred = models.SmallIntegerField(null=True, blank=True, help_text="The person's answer when saved.")
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "item", "kind", "draw"], name="label_request_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["calibration", "certification", "audit", "verification"]),
                name="label_request_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "answered", "withdrawn"]), name="label_request_status"
            ),
            # A drawn request carries its probability; a verification request has none (it is not evidence).
            models.CheckConstraint(
                condition=(
                    Q(kind="verification", inclusion_probability__isnull=True)
                    | (~Q(kind="verification") & Q(inclusion_probability__gt=0) & Q(inclusion_probability__lte=1))
                ),
                name="label_request_probability",
            ),
            models.CheckConstraint(
                condition=Q(status="answered", answered_at__isnull=False) | ~Q(status="answered"),
                name="label_request_answered_at",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "annotator", "status", "created_at"], name="label_request_queue_idx"),
            models.Index(fields=["item", "annotator"], name="label_request_item_idx"),
            models.Index(fields=["project", "kind", "status"], name="label_request_kind_idx"),
        ]


class ResolutionChoice(models.Model):
    """What a person did on the after-label resolution step, where the model's different label was shown beside
    theirs: kept their label ("Keep my label") or changed it (a resolution save). Recorded as an event each time, so
    the keep rate of the resolution step exists as it does for verification requests."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="resolution_choices")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="resolution_choices")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kept = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project", "created_at"], name="resolution_choice_project_idx")]


class Repeat(models.Model):
    """An item shown again to an annotator who already labelled it, unannounced, to measure their consistency.

    Drawn and served by ``annotation.queue.order``; answered by ``annotation.repeats.services.repeat_answer``. The
    second judgment lives here and in RepeatValue, never in the Annotation: the original judgment, its revisions and
    every aggregate built from it stay as they were. Only the consistency part of Eq. 8 reads repeats.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="repeats")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="repeats")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="repeats")
    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="repeats")
    response_order = models.JSONField(help_text="Shown as the first time: the order of the original judgment.")
    binary_choice = models.SmallIntegerField(null=True, blank=True)
    likert_value = models.PositiveSmallIntegerField(null=True, blank=True)
    time_spent_ms = models.PositiveIntegerField(default=0)
    items_between = models.PositiveIntegerField(help_text="The annotator's other labels between the two judgments.")
    skip_reason = models.CharField(max_length=300, blank=True, help_text="Skipped instead of answered: no values.")
    served_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "item"], name="repeat_once_per_annotator_item"),
            models.CheckConstraint(condition=Q(binary_choice__gte=TIE), name="repeat_binary_choice_valid"),
        ]
        indexes = [models.Index(fields=["project", "annotator", "answered_at"], name="repeat_open_idx")]


class RepeatValue(models.Model):
    """(μ, ν) in per-mille of a repeat judgment, under the same database rules as JudgmentValue."""

    repeat = models.ForeignKey(Repeat, on_delete=models.CASCADE, related_name="values")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")
    mu = models.SmallIntegerField()
    nu = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["repeat", "response", "criterion"], name="repeat_value_unique"),
            models.CheckConstraint(condition=Q(mu__gte=0), name="repeat_mu_non_negative"),
            models.CheckConstraint(condition=Q(nu__gte=0), name="repeat_nu_non_negative"),
            models.CheckConstraint(condition=Q(mu__lte=PERMILLE - F("nu")), name="repeat_mu_plus_nu_at_most_one"),
        ]


class ItemEscalation(models.Model):
    """Adaptive overlap: an item whose aggregate was hesitant or disputed, and the extra labels it was given.

    Written by ``aggregation.designs.adaptive`` (which reads the aggregates), read by the queue
    (``annotation.queue.order``), so it lives on the queue's floor. ``wanted`` is the number of saved labels the
    item should reach; the snapshot of the aggregate when first escalated is what the dashboard compares the
    current aggregate with (flipped, firmed up).
    """

    class Reason(models.TextChoices):
        HESITANT = "hesitant", "Hesitant (high π)"
        DISPUTED = "disputed", "Disputed (confident, disagreeing)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="escalations")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="escalation")
    reason = models.CharField(max_length=8, choices=Reason.choices)
    extra = models.PositiveSmallIntegerField(default=0, help_text="Extra labels granted so far.")
    wanted = models.PositiveIntegerField(help_text="Saved labels the item should reach.")
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    before_preferred = models.SmallIntegerField(null=True, help_text="Best position (−1 tie) when first escalated.")
    before_margin = models.FloatField(null=True)
    before_hesitation = models.FloatField(null=True)
    before_agreement = models.FloatField(null=True)
    before_labels = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["project", "wanted"], name="escalation_queue_idx")]


# The method study lives in a module of its own; imported here so Django registers its models.
from annotation.crowd.models import Participant, StudyLink  # noqa: E402, F401
from annotation.method_study.models import MethodStudy, StudyCell  # noqa: E402, F401
