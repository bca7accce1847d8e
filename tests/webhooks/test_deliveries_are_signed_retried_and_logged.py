"""A delivery is signed (Standard Webhooks), retried after a failure and logged; after the last attempt it is marked
failed, and the lead's redeliver button sends it again."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from standardwebhooks.webhooks import Webhook as Verifier

from config import events
from projects.webhooks.models import WebhookDelivery
from projects.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


def _import_done(project, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        events.project_event(project_id=project.pk, name="import.done", data={"job_id": 7, "result": {"created": 3}})


def test_a_failed_delivery_is_retried_and_each_attempt_is_signed(
    project, lead, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory([500, 200])
    hook = webhook_create(project=project, url=receiver.url, events=["import.done"], user=lead)

    _import_done(project, django_capture_on_commit_callbacks)

    assert len(receiver.requests) == 2
    (first_headers, _first_body), (headers, body) = receiver.requests
    assert first_headers["webhook-id"] == headers["webhook-id"]  # one message, two attempts
    payload = Verifier(hook.secret).verify(body, headers)
    assert payload["type"] == "import.done"
    assert payload["data"] == {"project_id": project.pk, "job_id": 7, "result": {"created": 3}}
    with pytest.raises(Exception, match="signature"):
        Verifier("whsec_" + "A" * 44).verify(body, headers)
    delivery = WebhookDelivery.objects.get(webhook=hook)
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("delivered", 2, 200)
    assert json.loads(body)["id"] == delivery.message_id == headers["webhook-id"]


def test_hooks_hear_only_their_events(project, lead, receiver_factory, django_capture_on_commit_callbacks):
    receiver = receiver_factory([200])
    webhook_create(project=project, url=receiver.url, events=["export.done"], user=lead)

    _import_done(project, django_capture_on_commit_callbacks)

    assert receiver.requests == []
    assert not WebhookDelivery.objects.exists()


def test_the_last_failure_is_logged_and_the_lead_redelivers(
    client, project, lead, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory([503])
    hook = webhook_create(project=project, url=receiver.url, events=["import.done"], user=lead)

    _import_done(project, django_capture_on_commit_callbacks)

    failed = WebhookDelivery.objects.get(webhook=hook)
    assert (failed.status, failed.attempts, failed.error) == ("failed", 3, "HTTP 503")
    assert len(receiver.requests) == 3  # WEBHOOK_MAX_ATTEMPTS
    client.force_login(lead)
    page = client.get(reverse("webhooks_page", args=[project.pk]))
    assert b"HTTP 503" in page.content
    assert b"Failed" in page.content

    receiver.script = [200]
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(reverse("webhook_redeliver", args=[project.pk, failed.pk]))

    assert answer.status_code == 302
    again = WebhookDelivery.objects.exclude(pk=failed.pk).get(webhook=hook)
    assert (again.status, again.attempts, again.event) == ("delivered", 1, "import.done")
    assert again.payload["data"] == failed.payload["data"]
    assert again.message_id != failed.message_id
    assert len(receiver.requests) == 4


def test_outsiders_and_annotators_cannot_see_or_redeliver(client, project, lead, annotator, outsider, receiver_factory):
    receiver = receiver_factory([200])
    hook = webhook_create(project=project, url=receiver.url, events=["import.done"], user=lead)
    delivery = WebhookDelivery.objects.create(webhook=hook, event="import.done", message_id="msg_x", payload={})
    for person in (annotator, outsider):
        client.force_login(person)
        assert client.get(reverse("webhooks_page", args=[project.pk])).status_code == 404
        assert client.post(reverse("webhook_redeliver", args=[project.pk, delivery.pk])).status_code == 404
        assert client.post(reverse("webhook_remove", args=[project.pk, hook.pk])).status_code == 404
    assert receiver.requests == []
