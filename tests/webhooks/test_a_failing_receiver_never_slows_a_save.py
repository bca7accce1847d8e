"""A save does no webhook work: no query of the webhook tables, nothing sent before it returns. Labels saved reach
the hook in one batch after the figures' recompute, and a receiver that fails is retried there, not in the save."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.webhooks.models import WebhookDelivery
from projects.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


def _save(project, item, user):
    values = [{"response": r.position, "criterion": "overall", "mu": 600, "nu": 200} for r in item.responses.all()]
    return annotation_save(project=project, item=item, annotator=user, save=SaveRequest(values=values))


def test_saves_touch_no_webhook_and_are_announced_once_in_a_batch(
    project, lead, annotator, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory([500])  # fails every time
    hook = webhook_create(project=project, url=receiver.url, events=["labels.saved"], user=lead)
    items = list(project.items.order_by("id")[:3])

    with django_capture_on_commit_callbacks(execute=False) as callbacks, CaptureQueriesContext(connection) as queries:
        for item in items:
            _save(project, item, annotator)

    assert not [q["sql"] for q in queries.captured_queries if "webhooks_" in q["sql"]]
    assert receiver.requests == []
    assert not WebhookDelivery.objects.exists()

    # After the commit: the recompute runs, then one labels.saved for the three saves, tried and failed in the
    # background (eager here), the saves long returned.
    with django_capture_on_commit_callbacks(execute=True):
        for callback in callbacks:
            callback()

    (delivery,) = WebhookDelivery.objects.filter(webhook=hook)
    assert delivery.event == "labels.saved"
    assert delivery.payload["data"]["new_labels"] == 3
    assert (delivery.status, delivery.attempts) == ("failed", 3)
    assert len(receiver.requests) == 3
