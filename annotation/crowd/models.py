"""The crowd study's tables: study links and the participants who came through them.

They live with the crowd study's logic (annotation.crowd) and keep the tables they were created with in projects.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Project


class StudyLink(models.Model):
    """A link a lead hands to a crowd platform (Prolific and the like): whoever opens it becomes a participant.

    The token is the only secret: anyone with the URL may take part, as on the platforms themselves. Attention
    checks are items with gold, named here by external id or marked ``metadata.attention_check`` (with
    ``attention_from_metadata``); a participant who answers more than ``attention_max_failures`` of them against
    gold is screened out.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="study_links")
    name = models.CharField(max_length=200)
    token = models.CharField(max_length=64, unique=True)
    completion_code = models.CharField(max_length=64)
    screened_out_code = models.CharField(max_length=64, blank=True, help_text="Empty: no code for the screened out.")
    active = models.BooleanField(default=True)
    max_participants = models.PositiveIntegerField(null=True, blank=True)
    items_per_participant = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: until the queue ends.")
    attention_item_ids = models.JSONField(default=list, blank=True, help_text="External ids of items with gold.")
    attention_from_metadata = models.BooleanField(default=False)
    attention_every = models.PositiveSmallIntegerField(default=5, help_text="One check after every N other items.")
    attention_max_failures = models.PositiveSmallIntegerField(default=0)
    # What earns the completion code: saved labels up to the quota (skips only when this says so) and at least
    # this many attention checks answered (a skipped check is not an answer).
    skips_count_toward_quota = models.BooleanField(default=False)
    attention_min_answered = models.PositiveSmallIntegerField(default=0)
    # What crowd platforms expect: instructions to agree to before the first item (empty: none), where to send a
    # participant who finished ("{code}" is replaced by the completion code) and a code for those who return.
    consent_text = models.TextField(blank=True)
    completion_url = models.CharField(max_length=500, blank=True)
    return_code = models.CharField(max_length=64, blank=True, help_text="Empty: no code for returned participants.")
    # The participant's interface language, carried as ?lang= on the link's URL (config/language.py).
    language = models.CharField(max_length=16, blank=True, help_text="Empty: the participant's browser decides.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table keeps the name it was created with in projects (the model moved here in 2026-12).
        db_table = "projects_studylink"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(max_participants__gte=1), name="study_link_max_participants_positive"),
            models.CheckConstraint(condition=Q(items_per_participant__gte=1), name="study_link_quota_positive"),
            models.CheckConstraint(condition=Q(attention_every__gte=1), name="study_link_attention_every_positive"),
            models.CheckConstraint(condition=~Q(completion_code=""), name="study_link_completion_code_set"),
            models.CheckConstraint(
                condition=Q(language__in=["", *(code for code, _ in settings.LANGUAGES)]),
                name="study_link_language_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.project})"


class Participant(models.Model):
    """A person who arrived through a study link: a login-less annotator known by the platform's ids."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Taking part"
        COMPLETED = "completed", "Completed"
        SCREENED_OUT = "screened_out", "Screened out by attention checks"
        RETURNED = "returned", "Returned without finishing"

    link = models.ForeignKey(StudyLink, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_participant")
    external_id = models.CharField(max_length=64)
    study_id = models.CharField(max_length=64, blank=True)
    session_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the end page first showed a code (completion or screened-out); platforms pay on the code.
    code_shown_at = models.DateTimeField(null=True, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    # Drawn once at entry: where in each window of items this participant's attention check falls.
    check_seed = models.BigIntegerField(default=0)

    class Meta:
        db_table = "projects_participant"
        ordering = ["started_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["link", "external_id"], name="participant_unique_per_link"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} in {self.link}"
