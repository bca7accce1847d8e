"""Webhooks: registration (checked like the LLM endpoint), the deliveries an event makes, and one delivery attempt.

An event never waits for a receiver: the deliveries are rows written after the event's transaction committed, and
each is sent by a Celery task (projects.webhooks.tasks) that retries with exponential backoff. The URL is checked
again before every attempt, since a name can resolve elsewhere later.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from projects.llm_url import LLMURLRefused, check_llm_base_url
from projects.models import Item, Project
from projects.webhooks.models import EVENT_NAMES, Webhook, WebhookDelivery
from projects.webhooks.signing import signed_headers

logger = logging.getLogger(__name__)

MAX_HOOKS_PER_PROJECT = 20
TIMEOUT_SECONDS = 5.0


def check_webhook_url(url: str) -> None:
    try:
        check_llm_base_url(
            url,
            allow_private=settings.WEBHOOK_ALLOW_PRIVATE_URLS,
            private_setting="WEBHOOK_ALLOW_PRIVATE_URLS",
            what="a webhook receiver",
        )
    except LLMURLRefused as refused:
        raise ValidationError({"url": str(refused)}) from None
    if not url.strip():
        raise ValidationError({"url": "A webhook needs a URL."})


def check_webhook(*, project: Project, url: str, events: list[str]) -> None:
    check_webhook_url(url)
    unknown = sorted(set(events) - set(EVENT_NAMES))
    if unknown or not events:
        raise ValidationError({"events": f"Choose one or more of {', '.join(EVENT_NAMES)}."})
    if Webhook.objects.filter(project=project, url=url.strip()).exists():
        raise ValidationError({"url": "This project already has a webhook for this URL."})
    if Webhook.objects.filter(project=project).count() >= MAX_HOOKS_PER_PROJECT:
        raise ValidationError({"url": f"A project has at most {MAX_HOOKS_PER_PROJECT} webhooks."})


@transaction.atomic
def webhook_create(*, project: Project, url: str, events: list[str], user: AbstractBaseUser | None) -> Webhook:
    check_webhook(project=project, url=url, events=events)
    return Webhook.objects.create(
        project=project,
        url=url.strip(),
        events=sorted(set(events), key=EVENT_NAMES.index),
        created_by_id=None if user is None else user.pk,
        labels_announced=project_progress(project_id=project.pk)["labels"],
    )


def project_progress(*, project_id: int) -> dict[str, int]:
    """Labels saved and items that have all the labels they want (overlap plus any extra), from the items' counts."""
    overlap = Project.objects.filter(pk=project_id).values_list("overlap", flat=True).first() or 1
    counts = Item.objects.filter(project_id=project_id).aggregate(
        labels=Coalesce(Sum("annotation_count"), 0),
        items_total=Count("pk"),
        items_labelled=Count("pk", filter=Q(annotation_count__gt=0)),
        items_done=Count("pk", filter=Q(annotation_count__gte=F("extra_labels") + overlap)),
    )
    return {key: int(value) for key, value in counts.items()}


@transaction.atomic
def webhook_progress_announce(*, project_id: int) -> list[WebhookDelivery]:
    """After the figures' recompute: labels.saved to hooks whose last announcement predates labels saved since
    (so saves are batched by the recompute's debounce), project.completed once when every item is done."""
    hooks = list(Webhook.objects.select_for_update().filter(project_id=project_id, active=True))
    if not hooks:
        return []
    progress = project_progress(project_id=project_id)
    deliveries: list[WebhookDelivery] = []
    fresh = [h for h in hooks if "labels.saved" in h.events and h.labels_announced != progress["labels"]]
    for hook in fresh:
        data = {**progress, "new_labels": progress["labels"] - hook.labels_announced}
        deliveries += webhook_deliveries_create(project_id=project_id, event="labels.saved", data=data, hooks=[hook])
    Webhook.objects.filter(pk__in=[h.pk for h in fresh]).update(labels_announced=progress["labels"])
    complete = progress["items_total"] > 0 and progress["items_done"] == progress["items_total"]
    told = [h for h in hooks if "project.completed" in h.events and not h.completed_announced]
    if complete and told:
        deliveries += webhook_deliveries_create(
            project_id=project_id, event="project.completed", data=progress, hooks=told
        )
        Webhook.objects.filter(pk__in=[h.pk for h in told]).update(completed_announced=True)
    elif not complete:
        Webhook.objects.filter(project_id=project_id, completed_announced=True).update(completed_announced=False)
    return deliveries


@transaction.atomic
def webhook_delete(*, webhook: Webhook) -> None:
    webhook.delete()


def _payload(*, project_id: int, event: str, data: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {
        "type": event,
        "id": message_id,
        "timestamp": timezone.now().isoformat(timespec="seconds"),
        "data": {"project_id": project_id, **data},
    }


@transaction.atomic
def webhook_deliveries_create(
    *, project_id: int, event: str, data: dict[str, Any], hooks: list[Webhook] | None = None
) -> list[WebhookDelivery]:
    """A delivery row per active hook of the project that takes ``event`` (or per hook of ``hooks``); the caller
    sends them after commit (projects.webhooks.tasks.deliveries_send_on_commit)."""
    if hooks is None:
        hooks = [h for h in Webhook.objects.filter(project_id=project_id, active=True) if event in h.events]
    deliveries = []
    for hook in hooks:
        message_id = f"msg_{uuid.uuid4().hex}"
        deliveries.append(
            WebhookDelivery.objects.create(
                webhook=hook,
                event=event,
                message_id=message_id,
                payload=_payload(project_id=project_id, event=event, data=data, message_id=message_id),
            )
        )
    return deliveries


def webhook_delivery_attempt(*, delivery_id: int) -> bool:
    """POST the delivery once, signed; record the outcome. True when there is nothing more to do (delivered, or
    the delivery is gone or already delivered); False when the attempt failed and may be retried."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status == WebhookDelivery.Status.DELIVERED:
        return True
    body = json.dumps(delivery.payload, ensure_ascii=False, separators=(",", ":")).encode()
    now = timezone.now()
    status_code: int | None = None
    error = ""
    try:
        check_webhook_url(delivery.webhook.url)
        headers = signed_headers(secret=delivery.webhook.secret, message_id=delivery.message_id, at=now, body=body)
        # No redirects: a redirect could lead the request past the address check.
        response = httpx.post(
            delivery.webhook.url, content=body, headers=headers, timeout=TIMEOUT_SECONDS, follow_redirects=False
        )
        status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}"
    except ValidationError as refused:
        error = " ".join(refused.messages)
    except httpx.HTTPError as failed:
        error = f"{type(failed).__name__}: {failed}"[:500]
    delivered = not error
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=delivery.attempts + 1,
        last_attempt_at=now,
        response_status=status_code,
        error=error,
        status=WebhookDelivery.Status.DELIVERED if delivered else WebhookDelivery.Status.RETRYING,
        delivered_at=now if delivered else None,
    )
    return delivered


def webhook_delivery_give_up(*, delivery_id: int) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id).exclude(status=WebhookDelivery.Status.DELIVERED).update(
        status=WebhookDelivery.Status.FAILED
    )


@transaction.atomic
def webhook_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a logged delivery again as a new delivery of the same payload and message id's event (the lead's
    button): a new message id, since the receiver may have dropped the first as a repeat."""
    (again,) = webhook_deliveries_create(
        project_id=delivery.webhook.project_id,
        event=delivery.event,
        data={k: v for k, v in delivery.payload.get("data", {}).items() if k != "project_id"},
        hooks=[delivery.webhook],
    )
    return again
