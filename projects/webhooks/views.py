"""The lead's webhooks page: register a URL for some events, see each hook's secret and delivery log, delete a hook,
send a delivery again. One view serves the page and, for htmx, the hooks' fragment."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from config.auth import signed_in_user
from projects.webhooks.forms import WebhookForm
from projects.webhooks.selectors import delivery_for_lead, webhook_for_lead, webhooks_for_lead
from projects.webhooks.services import webhook_create, webhook_delete, webhook_redeliver
from projects.webhooks.tasks import deliveries_send_on_commit


@login_required
@require_http_methods(["GET", "POST"])
def webhooks_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project, hooks = webhooks_for_lead(user=request.user, project_id=project_id)
    form = WebhookForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            webhook_create(
                project=project,
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
                user=signed_in_user(request),
            )
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                for message in messages:
                    form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("webhooks_page", project_id=project.pk)
    template = "webhooks/partials/hooks.html" if request.htmx else "webhooks/page.html"  # type: ignore[attr-defined]
    context = {"project": project, "hooks": hooks, "form": form}
    return render(request, template, context, status=400 if form.is_bound else 200)


@login_required
@require_POST
def webhook_remove(request: HttpRequest, project_id: int, webhook_id: int) -> HttpResponse:
    webhook_delete(webhook=webhook_for_lead(user=request.user, project_id=project_id, webhook_id=webhook_id))
    return redirect("webhooks_page", project_id=project_id)


@login_required
@require_POST
def webhook_redeliver_view(request: HttpRequest, project_id: int, delivery_id: int) -> HttpResponse:
    delivery = delivery_for_lead(user=request.user, project_id=project_id, delivery_id=delivery_id)
    deliveries_send_on_commit([webhook_redeliver(delivery=delivery)])
    return redirect("webhooks_page", project_id=project_id)
