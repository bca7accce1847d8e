"""A webhook URL is checked like the LLM endpoint: no metadata service, link-local or, unless allowed, private
address; events must be known. A refused hook writes nothing."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from projects.webhooks.models import Webhook
from projects.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata address"),
        ("http://metadata.google.internal/", "cloud metadata service"),
        ("http://[fe80::1]/hook", "link-local"),
        ("file:///etc/passwd", "http:// or https://"),
    ],
)
def test_forbidden_addresses_are_refused(project, lead, url, reason):
    with pytest.raises(ValidationError, match=reason):
        webhook_create(project=project, url=url, events=["import.done"], user=lead)
    assert not Webhook.objects.exists()


def test_private_addresses_need_the_setting(project, lead, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    with pytest.raises(ValidationError, match="WEBHOOK_ALLOW_PRIVATE_URLS"):
        webhook_create(project=project, url="http://127.0.0.1:9/hook", events=["import.done"], user=lead)


def test_unknown_events_are_refused_on_the_page(client, project, lead):
    client.force_login(lead)
    answer = client.post(
        reverse("webhooks_page", args=[project.pk]), {"url": "https://hooks.example/x", "events": ["x"]}
    )
    assert answer.status_code == 400
    assert not Webhook.objects.exists()


def test_the_lead_adds_a_hook_on_the_page_and_sees_its_secret(client, project, lead, django_assert_max_num_queries):
    client.force_login(lead)
    added = client.post(
        reverse("webhooks_page", args=[project.pk]),
        {"url": "http://127.0.0.1:9/hook", "events": ["handoff.made", "handoff.undone"]},
    )
    assert added.status_code == 302
    hook = Webhook.objects.get(project=project)
    assert hook.events == ["handoff.made", "handoff.undone"]
    with django_assert_max_num_queries(12):
        page = client.get(reverse("webhooks_page", args=[project.pk]))
    assert hook.secret.encode() in page.content
    assert hook.secret.startswith("whsec_")
