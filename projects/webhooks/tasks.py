"""Webhook delivery by Celery: one attempt per task run, the next attempt scheduled with exponential backoff.

Attempt n (from 1) that fails is followed by attempt n + 1 after BACKOFF_SECONDS · 2^(n−1) (jitter ±20 %, so many
hooks failing together do not retry together), up to WEBHOOK_MAX_ATTEMPTS; then the delivery is marked failed and
waits for the lead's redeliver button. The task fetches the delivery by id and calls the service, so a redelivered
message finds the row as it is (a delivered one is not sent twice).
"""

from __future__ import annotations

import logging
import random

from celery import shared_task
from django.conf import settings
from django.db import transaction

from projects.webhooks.models import WebhookDelivery
from projects.webhooks.services import webhook_delivery_attempt, webhook_delivery_give_up

logger = logging.getLogger(__name__)


def backoff_seconds(attempt: int) -> float:
    base = float(settings.WEBHOOK_BACKOFF_SECONDS) * 2 ** (attempt - 1)
    return round(base * random.uniform(0.8, 1.2), 1)


@shared_task(name="projects.webhooks.deliver", acks_late=True, soft_time_limit=30, time_limit=40, ignore_result=True)
def webhook_deliver(delivery_id: int) -> None:
    if webhook_delivery_attempt(delivery_id=delivery_id):
        return
    attempts = WebhookDelivery.objects.filter(pk=delivery_id).values_list("attempts", flat=True).first() or 0
    if attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        webhook_delivery_give_up(delivery_id=delivery_id)
        return
    webhook_deliver.apply_async((delivery_id,), countdown=backoff_seconds(attempts))


def deliveries_send_on_commit(deliveries: list[WebhookDelivery]) -> None:
    """Send each delivery once the writer's transaction commits; a broker error is logged, never raised into it."""
    ids = [delivery.pk for delivery in deliveries]
    if ids:
        transaction.on_commit(lambda: [webhook_deliver.delay(pk) for pk in ids], robust=True)
