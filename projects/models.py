"""Projects, their members, criteria, items with their responses, LLM suggestions and background jobs.

Conventions shared by every app:
- Slider values are stored as integer per-mille (0..1000). The page, the API, imports and the database all apply
  the same rule: a value is k/1000 for a whole k, μ ≥ 0, ν ≥ 0, μ+ν ≤ 1000 ‰.
- A response is named by its stored ``position`` (0..n-1) within its item, never by the order an annotator saw.
- ``TIE`` (-1) stands for "no response preferred" wherever a preferred position is stored.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Func, Q
from django.db.models.lookups import Exact
from django.utils.translation import gettext_lazy

TIE = -1
PERMILLE = 1000


class Project(models.Model):
    class Mode(models.TextChoices):
        IFS = "ifs", gettext_lazy("IFS sliders (support and opposition)")
        BINARY = "binary", gettext_lazy("Binary (A, B or tie)")
        LIKERT = "likert", gettext_lazy("Likert side-by-side scale")
        # A method study: each annotator's block says which of the modes above they use (annotation.method_study).
        CROSSOVER = "crossover", gettext_lazy("Crossover method study (set up on its own page)")

    class SuggestionDisplay(models.TextChoices):
        BEFORE_LABEL = "before_label", "Before labelling"
        AFTER_LABEL = "after_label", "After labelling (resolution step)"
        BLIND_SAMPLE = "blind_sample", "Blind sample, shown elsewhere"

    class VerifyVisibility(models.TextChoices):
        SHOWN = "shown", "Shown: keep or change the model's answer"
        BLIND = "blind", "Blind: label without the model's answer"

    class Operator(models.TextChoices):
        WEIGHTED_MEAN = "weighted_mean", "Weighted mean"
        IFWA = "ifwa", "IFWA (Xu 2007)"
        IFWG = "ifwg", "IFWG (Xu & Yager 2006)"

    class Phase(models.TextChoices):
        COLLECTING = "collecting", "Collecting labels"
        HANDED_OFF = "handed_off", "Handed off to the LLM"
        CLOSED = "closed", "Closed"

    class HandoffRule(models.TextChoices):
        POINT = "point", "Blind agreement ≥ threshold"
        LOWER_BOUND = "lower_bound", "Lower 95 % bound of blind agreement ≥ threshold"

    class HandoffTrigger(models.TextChoices):
        MANUAL = "manual", "A lead clicks"
        AUTOMATIC = "automatic", "Automatically"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True, help_text="Shown to annotators above every item (markdown).")
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.IFS)
    likert_points = models.PositiveSmallIntegerField(default=7)
    overlap = models.PositiveSmallIntegerField(default=3, help_text="Annotations wanted per item.")
    seed = models.BigIntegerField(default=0, help_text="Drives the blind sample, queue and response orders.")
    phase = models.CharField(max_length=12, choices=Phase.choices, default=Phase.COLLECTING)

    suggestion_display = models.CharField(
        max_length=14, choices=SuggestionDisplay.choices, default=SuggestionDisplay.BLIND_SAMPLE
    )
    verify_visibility = models.CharField(
        max_length=5,
        choices=VerifyVisibility.choices,
        default=VerifyVisibility.SHOWN,
        help_text="Verification requests with the model's answer on screen, or blind (then counted as blind labels).",
    )
    blind_rate = models.FloatField(default=0.2)
    minimum_blind_sample = models.PositiveIntegerField(default=20)
    tie_tolerance = models.FloatField(default=0.1, help_text="Scores closer than this count as a tie.")

    handoff_agreement_threshold = models.FloatField(default=0.9)
    handoff_minimum_blind_comparisons = models.PositiveIntegerField(default=20)
    handoff_rule = models.CharField(max_length=12, choices=HandoffRule.choices, default=HandoffRule.POINT)
    handoff_trigger = models.CharField(max_length=10, choices=HandoffTrigger.choices, default=HandoffTrigger.MANUAL)

    aggregation_operator = models.CharField(max_length=14, choices=Operator.choices, default=Operator.WEIGHTED_MEAN)
    weight_consistency = models.FloatField(default=1 / 3)
    weight_expertise = models.FloatField(default=1 / 3)
    weight_agreement = models.FloatField(default=1 / 3)

    # Repeats (annotation.queue.order): a share of each annotator's items comes back to them, unannounced, after a
    # delay in items and in time; the second judgment feeds the consistency part of Eq. 8.
    repeat_rate = models.FloatField(default=0.0, help_text="Share of an annotator's items shown to them again.")
    repeat_delay_items = models.PositiveIntegerField(default=20, help_text="Other items labelled before a repeat.")
    repeat_delay_minutes = models.PositiveIntegerField(default=30, help_text="Minutes before a repeat.")
    # Adaptive overlap (aggregation.maths.adaptive): extra annotators for hesitant or disputed items, up to a cap per
    # item
    # and a budget per project; 0 for either turns it off.
    adaptive_cap = models.PositiveSmallIntegerField(default=0, help_text="Extra labels per item at most; 0: off.")
    adaptive_budget = models.PositiveIntegerField(default=0, help_text="Extra labels for the project at most.")
    adaptive_hesitation = models.FloatField(default=0.4, help_text="Mean hesitation π from which an item is hesitant.")
    adaptive_dispute = models.FloatField(default=0.6, help_text="Agreement below which a confident item is disputed.")
    adaptive_expert = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="When set, the extra labels go to this annotator alone.",
    )

    llm_base_url = models.CharField(max_length=300, blank=True, help_text="OpenAI-compatible; empty: LLM_BASE_URL.")
    llm_model = models.CharField(max_length=200, blank=True)
    llm_api_key = models.CharField(max_length=300, blank=True, help_text="Empty: LLM_API_KEY from the environment.")
    llm_instruction_template = models.TextField(blank=True)

    # Bumped by projects.services whenever a setting that figures are computed from changes (FIGURE_SETTINGS there,
    # and criterion weights); every aggregate stores the version it was computed with, so an older one is stale.
    settings_version = models.PositiveIntegerField(default=0)
    # Set by the first saved annotation; from then on the blind rate of existing items is frozen.
    labelling_started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="project_overlap_positive"),
            # projects.preference.LIKERT_POINTS: odd, so the middle point means "no preference".
            models.CheckConstraint(
                condition=Q(likert_points__in=[3, 5, 7, 9, 11]), name="project_likert_points_odd_range"
            ),
            models.CheckConstraint(condition=Q(blind_rate__gte=0, blind_rate__lte=1), name="project_blind_rate_range"),
            models.CheckConstraint(condition=Q(tie_tolerance__gte=0, tie_tolerance__lte=2), name="project_tie_range"),
            models.CheckConstraint(
                condition=Q(handoff_agreement_threshold__gte=0, handoff_agreement_threshold__lte=1),
                name="project_handoff_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(weight_consistency__gte=0, weight_expertise__gte=0, weight_agreement__gte=0),
                name="project_weight_coefficients_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(repeat_rate__gte=0, repeat_rate__lte=0.5), name="project_repeat_rate_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        LEAD = "lead", "Lead"
        ANNOTATOR = "annotator", "Annotator"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.project}"


class Criterion(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="criteria")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    weight = models.FloatField(default=1.0, help_text="Weights of a project's criteria sum to 1.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="criterion_unique_name"),
            models.CheckConstraint(condition=Q(weight__gte=0, weight__lte=1), name="criterion_weight_range"),
        ]

    def __str__(self) -> str:
        return self.name


class JsonbTypeof(Func):
    """The JSON type of a column's value ("array", "object", …), for constraints that say which JSON shape a column
    may hold: PostgreSQL's jsonb_typeof, and SQLite's json_type (the embedded default), which names types alike."""

    function = "jsonb_typeof"
    output_field = models.CharField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return self.as_sql(compiler, connection, function="json_type", **extra_context)


class Item(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    prompt = models.TextField()
    # The prompt as chat messages [{"role", "content", "name"?}] when the source was a conversation
    # (projects.conversation); ``prompt`` then holds their flattened text for the paths that read text.
    prompt_messages = models.JSONField(null=True, blank=True)
    # What every member may read about the item (source, topic, …).
    metadata = models.JSONField(default=dict, blank=True)
    # What only leads may read: the gold answer's justification and anything else that would tell annotators the
    # answer they are measured against (projects.imports.items files such keys here).
    lead_metadata = models.JSONField(default=dict, blank=True)
    gold_position = models.SmallIntegerField(null=True, blank=True, help_text="Gold preference; -1 is a tie.")

    # The blind draw u = hash(project seed, external id) in [0, 1); see projects.blind.
    blind_draw = models.FloatField()
    is_blind = models.BooleanField(default=False)
    blind_inclusion_probability = models.FloatField(null=True, blank=True)
    # A second, independent hash orders the queue, so blind items are not the first ones everyone sees.
    queue_key = models.FloatField()

    # Saved annotations (not skips), kept by the annotation services so the queue never counts a whole project.
    annotation_count = models.PositiveIntegerField(default=0)
    # Labels wanted beyond the project's overlap, set when a lead sends the item back (annotation.notes.services):
    # the item wants project.overlap + extra_labels labels.
    # A database default too: the COPY import path names its columns and leaves this one out.
    extra_labels = models.PositiveSmallIntegerField(default=0, db_default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="item_unique_external_id"),
            models.CheckConstraint(condition=Q(blind_draw__gte=0, blind_draw__lt=1), name="item_blind_draw_range"),
            models.CheckConstraint(condition=Q(queue_key__gte=0, queue_key__lt=1), name="item_queue_key_range"),
            models.CheckConstraint(condition=Q(gold_position__gte=TIE), name="item_gold_position_valid"),
            # A conversation is a non-empty list of messages, never an object, a text or an empty list.
            models.CheckConstraint(
                condition=Q(prompt_messages__isnull=True)
                | Q(Exact(JsonbTypeof(F("prompt_messages")), "array"), ~Q(prompt_messages=[])),
                name="item_prompt_messages_list",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "annotation_count", "queue_key"], name="item_queue_idx"),
            models.Index(fields=["project", "is_blind"], name="item_blind_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.external_id}"


class Response(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="responses")
    position = models.PositiveSmallIntegerField()
    text = models.TextField(blank=True, help_text="May be empty: a model that answered nothing is still judged.")
    model_name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["item_id", "position"]
        constraints = [models.UniqueConstraint(fields=["item", "position"], name="response_unique_position")]

    def __str__(self) -> str:
        return f"{self.item} #{self.position}"


class Suggestion(models.Model):
    """The LLM's pre-label for an item. A failed generation is kept with its reason and is never a label."""

    class Source(models.TextChoices):
        IMPORTED = "imported", "Imported"
        GENERATED = "generated", "Generated by an endpoint"
        BASELINE = "baseline", "Baseline rule"

    class Status(models.TextChoices):
        OK = "ok", "OK"
        FAILED = "failed", "Failed"

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="suggestion")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OK)
    preferred_position = models.SmallIntegerField(null=True, blank=True, help_text="-1 is a tie; empty if failed.")
    rationale = models.TextField(blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.IMPORTED)
    failure_reason = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status="failed") | Q(preferred_position__isnull=False, preferred_position__gte=TIE),
                name="suggestion_ok_has_preference",
            ),
        ]

    def __str__(self) -> str:
        return f"suggestion for {self.item}"


class SuggestionValue(models.Model):
    """Optional (μ, ν) of a suggestion for one response, in per-mille."""

    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="values")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    mu = models.PositiveSmallIntegerField()
    nu = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suggestion", "response"], name="suggestion_value_unique"),
            models.CheckConstraint(
                condition=Q(mu__gte=0, nu__gte=0, mu__lte=PERMILLE, nu__lte=PERMILLE)
                & Q(mu__lte=PERMILLE - models.F("nu")),
                name="suggestion_value_valid_ifs",
            ),
        ]


class Job(models.Model):
    """A long import, export or suggestion run, with progress a browser or a script can poll."""

    class Kind(models.TextChoices):
        IMPORT_ITEMS = "import_items", "Import items"
        IMPORT_LABELS = "import_labels", "Import labels"
        EXPORT = "export", "Export"
        SUGGEST = "suggest", "Generate suggestions"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=14, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    options = models.JSONField(default=dict, blank=True)
    input_file = models.CharField(max_length=500, blank=True)  # unused since inputs live in JobChunk
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The job row is its own outbox: pending with no enqueued_at means its task never reached the broker.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # Written by the running worker every few seconds; a running job whose heartbeat is old lost its worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat")]


class JobChunk(models.Model):
    """A job's uploaded input or written output, in parts of at most a megabyte, kept in PostgreSQL so that a worker
    on any machine can read what the web server received and the web server can serve what a worker wrote."""

    class Stream(models.TextChoices):
        INPUT = "input", "Input"
        OUTPUT = "output", "Output"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    stream = models.CharField(max_length=6, choices=Stream.choices)
    part = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "stream", "part"], name="jobchunk_unique_part")]


class ImportedAnnotator(models.Model):
    """A person named in an imported file of labels, known to this project only by the file's name for them.

    Imported names are never accounts: "alice" in one project's file and "alice" in another's (or a registered
    alice) are three different people as far as Penumbra can tell. Annotations still need a user to point at (the
    queue, the aggregation and every export read ``Annotation.annotator``), so each identity owns a shadow user: no
    usable password, inactive, a username of its own (``imp<project>-…``) that no person can claim or log in with.
    A lead who knows who the person is links the identity to a real member (``linked_member``): the identity's labels
    move to that member and later imports of the same name file under the member.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imported_annotators")
    # The format the name came from ("native", "label-studio", …): two tools may use the same name for two people.
    source = models.CharField(max_length=20)
    external_id = models.CharField(max_length=150)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="imported_identity")
    linked_member = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="linked_identities"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    linked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["source", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "source", "external_id"], name="imported_annotator_unique_per_project"
            ),
            models.CheckConstraint(condition=~Q(external_id=""), name="imported_annotator_external_id_set"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.source}) in {self.project}"

    @property
    def files_under(self) -> int:
        """The id of the user this identity's labels are filed under."""
        return int(self.linked_member_id or self.user_id)
