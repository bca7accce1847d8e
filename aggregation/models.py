"""Aggregates written by background tasks; pages and exports only ever read these.

Computed values are floats in [0, 1] (not per-mille): they are results, not inputs.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Criterion, Item, Project, Response


class Provenance(models.TextChoices):
    HUMAN = "human", "Human labels"
    MODEL_HANDOFF = "model_handoff", "LLM suggestion after handoff"


class ItemAggregate(models.Model):
    """The headline figures of one item under the project's operator, all criteria combined."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="item_aggregates")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="aggregate")
    provenance = models.CharField(max_length=14, choices=Provenance.choices, default=Provenance.HUMAN)
    operator = models.CharField(max_length=14, choices=Project.Operator.choices)
    # Best and worst stored positions by score S = μ−ν (then accuracy); best is TIE (-1) when within tolerance.
    best_position = models.SmallIntegerField(null=True)
    worst_position = models.SmallIntegerField(null=True)
    p_best = models.FloatField(null=True, help_text="Soft label p(best ≻ worst).")
    margin = models.FloatField(null=True, help_text="S_best − S_worst.")
    hesitation = models.FloatField(null=True, help_text="Mean π over responses and annotators.")
    # IFS items: IFS agreement (corrected Eq. 11). Binary and Likert items: share of pairs of annotators whose
    # preference (choice, or sign of s with the tie band) is the same.
    agreement = models.FloatField(null=True, help_text="Agreement among annotators (IFS, or pairwise on choices).")
    signed_preference = models.FloatField(null=True, help_text="Mean s ∈ [−1, 1]; +1 = position 0 preferred.")
    # db_default too: raw writers (COPY in benchmarks and bulk paths) that do not name the column stay valid.
    vote_tie = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Binary/Likert: no response has more (unweighted) votes than every other.",
    )
    n_annotators = models.PositiveSmallIntegerField(default=0)
    # The newest annotation this aggregate has seen: an annotation updated later means it is stale.
    source_updated_at = models.DateTimeField(null=True)
    # Project.settings_version this row was computed with; lower than the project's means a setting changed since.
    settings_version = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "settings_version"], name="item_aggregate_settings_idx"),
            models.Index(fields=["project", "provenance"], name="item_aggregate_provenance_idx"),
            models.Index(fields=["project", "hesitation"], name="item_aggregate_hesitation_idx"),
            models.Index(fields=["project", "agreement"], name="item_aggregate_agreement_idx"),
        ]


class ResponseAggregate(models.Model):
    """Aggregated (μ, ν) per response × criterion × operator. ``criterion`` empty is the weighted overall.

    Recomputation replaces an item's rows (delete, then insert, in one transaction): ON CONFLICT cannot target the
    partial unique constraints below.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="response_aggregates")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="aggregates")
    criterion = models.ForeignKey(Criterion, null=True, on_delete=models.CASCADE, related_name="+")
    operator = models.CharField(max_length=14, choices=Project.Operator.choices)
    mu = models.FloatField()
    nu = models.FloatField()

    class Meta:
        constraints = [
            # Two partial constraints because SQLite cannot treat NULLs as equal in one.
            models.UniqueConstraint(
                fields=["response", "criterion", "operator"],
                condition=Q(criterion__isnull=False),
                name="response_aggregate_unique_per_criterion",
            ),
            models.UniqueConstraint(
                fields=["response", "operator"],
                condition=Q(criterion__isnull=True),
                name="response_aggregate_unique_overall",
            ),
            models.CheckConstraint(
                condition=Q(mu__gte=0, nu__gte=0) & Q(mu__lte=1.000001 - models.F("nu")),
                name="response_aggregate_valid_ifs",
            ),
        ]


class AnnotatorAggregate(models.Model):
    """One annotator's weight and its parts in one project (paper Eq. 8), and their working figures."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotator_aggregates")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    weight = models.FloatField()
    consistency = models.FloatField(null=True)
    expertise = models.FloatField(null=True)
    # Gold items the expertise is measured on; null for a row computed before it was recorded (then withheld).
    expertise_n = models.PositiveIntegerField(null=True)
    agreement = models.FloatField(null=True)
    consensus_weight = models.FloatField(null=True, help_text="Iterative consensus weighting, for comparison.")
    n_labels = models.PositiveIntegerField(default=0)
    median_time_ms = models.PositiveIntegerField(null=True)
    mean_hesitation = models.FloatField(null=True)
    blind_agreement = models.FloatField(null=True, help_text="Agreement with the LLM on this annotator's blind labels.")
    blind_n = models.PositiveIntegerField(default=0)
    settings_version = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "annotator"], name="annotator_aggregate_unique"),
        ]


class ProjectAggregate(models.Model):
    """A project's headline figures. Each JSON field has one writer, so recomputations never clobber each other.

    Figures are stored as {"value": float | None, "n": int, "ci": [low, high] | None}.
    - ``agreement`` (aggregation): pairwise_with_ties, pairwise_without_ties, alpha_interval, alpha_nominal, ifs.
    - ``suggestions`` (suggestion figures): blind.agreement, shown.agreement, anchoring_gap, accept,
      human_human, and the handoff evaluation.
    - ``plots``: hesitation histograms per criterion, agreement over time, weights.
    - ``progress``: items done / needed, per annotator counts.
    """

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="aggregate")
    agreement = models.JSONField(default=dict)
    suggestions = models.JSONField(default=dict)
    # Calibration, certification, audit and verification figures from label requests (suggestions.certification).
    labeling = models.JSONField(default=dict)
    plots = models.JSONField(default=dict)
    # Repeats and self-consistency, position bias, adaptive overlap (aggregation.designs.figures).
    study = models.JSONField(default=dict)
    progress = models.JSONField(default=dict)
    source_updated_at = models.DateTimeField(null=True)
    # Project.settings_version behind ``agreement``/``plots``/``progress``, and behind ``suggestions`` (its handoff
    # evaluation included): two writers, two stamps.
    settings_version = models.PositiveIntegerField(default=0)
    suggestions_settings_version = models.PositiveIntegerField(default=0)
    agreement_computed_at = models.DateTimeField(null=True)
    suggestions_computed_at = models.DateTimeField(null=True)
    computed_at = models.DateTimeField(null=True)
