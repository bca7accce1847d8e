"""Reads of a project's webhooks and their deliveries, for its leads only (anyone else gets 404)."""

from __future__ import annotations

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.http import Http404

from projects.models import Project
from projects.selectors import AnyUser, project_get_for_lead
from projects.webhooks.models import Webhook, WebhookDelivery

RECENT_DELIVERIES = 20


def webhooks_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, list[Webhook]]:
    """The project and its hooks, each with its most recent deliveries (``recent``): a fixed number of queries."""
    project = project_get_for_lead(user=user, project_id=project_id)
    hooks = list(Webhook.objects.filter(project=project).order_by("id"))
    recent = (
        WebhookDelivery.objects.filter(webhook__in=hooks)
        .annotate(rank=Window(RowNumber(), partition_by=[F("webhook_id")], order_by=F("id").desc()))
        .filter(rank__lte=RECENT_DELIVERIES)
        .order_by("webhook_id", "-id")
    )
    by_hook: dict[int, list[WebhookDelivery]] = {hook.pk: [] for hook in hooks}
    for delivery in recent:
        by_hook[delivery.webhook_id].append(delivery)
    for hook in hooks:
        hook.recent = by_hook[hook.pk]  # type: ignore[attr-defined]
    return project, hooks


def webhook_for_lead(*, user: AnyUser, project_id: int, webhook_id: int) -> Webhook:
    project = project_get_for_lead(user=user, project_id=project_id)
    hook = Webhook.objects.filter(project=project, pk=webhook_id).first()
    if hook is None:
        raise Http404("No such webhook.")
    return hook


def delivery_for_lead(*, user: AnyUser, project_id: int, delivery_id: int) -> WebhookDelivery:
    project = project_get_for_lead(user=user, project_id=project_id)
    delivery = (
        WebhookDelivery.objects.select_related("webhook").filter(webhook__project=project, pk=delivery_id).first()
    )
    if delivery is None:
        raise Http404("No such delivery.")
    return delivery
