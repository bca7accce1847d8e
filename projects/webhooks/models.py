"""A lead's webhook (URL, events, secret) and the log of its deliveries."""

from __future__ import annotations

import base64
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Project

#: Every event a hook may subscribe to: the project events (config.events.PROJECT_EVENTS) and the two this app
#: derives from the figures' recompute.
EVENTS = (
    ("labels.saved", "Labels saved (batched)"),
    ("import.done", "Import done"),
    ("export.done", "Export done"),
    ("handoff.made", "Handoff made"),
    ("handoff.undone", "Handoff undone"),
    ("audit.suspended", "Audit suspended the handoff"),
    ("project.completed", "Project complete"),
)
EVENT_NAMES = tuple(name for name, _ in EVENTS)


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class Webhook(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    events = models.JSONField(default=list, help_text="The event names this hook receives.")
    # The receiver verifies signatures with it, so it is shown to leads; it signs, it grants nothing here.
    secret = models.CharField(max_length=80, default=new_secret)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # The project's label count when labels.saved was last sent (the next one says how many were added since).
    labels_announced = models.PositiveIntegerField(default=0)
    # project.completed is sent once per completion (reset when new items make the project incomplete again).
    completed_announced = models.BooleanField(default=False)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "url"], name="webhook_unique_url_per_project"),
            models.CheckConstraint(condition=~Q(url=""), name="webhook_url_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.project} → {self.url}"


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RETRYING = "retrying", "Retrying"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    # The Standard Webhooks message id: the same on every attempt, so a receiver can drop repeats.
    message_id = models.CharField(max_length=40, unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["webhook", "-id"], name="webhook_delivery_recent")]
        constraints = [
            models.CheckConstraint(condition=Q(event__in=EVENT_NAMES), name="webhook_delivery_known_event"),
            models.CheckConstraint(
                condition=~Q(status="delivered") | Q(delivered_at__isnull=False),
                name="webhook_delivery_delivered_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk} ({self.status})"
