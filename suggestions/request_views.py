"""The label-request page, reached from the certification card: draw calibration, certification, audit or
verification requests with the API's service (suggestions.requests.label_requests_draw, the same rules and
figures), and watch each draw's requests being answered. Leads only."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count, Max, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from annotation.models import LabelRequest
from projects.models import Project
from projects.selectors import project_get_for_lead
from suggestions.requests import MAX_LABELS_PER_ITEM, MAX_REQUESTS, label_requests_draw


class RequestDrawForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("Kind"),
        choices=LabelRequest.Kind.choices,
        initial=LabelRequest.Kind.CERTIFICATION,
        help_text=_(
            "Certification and calibration: blind labels of items the model labelled, to measure it (calibration by "
            "its confidence). Audit: a share of the handed-off items, after a handoff. Verification: people keep or "
            "change the model's answer, with it on screen."
        ),
    )
    size = forms.IntegerField(
        label=_("Items to draw"),
        required=False,
        min_value=1,
        max_value=MAX_REQUESTS,
        initial=50,
        help_text=_("Not for an audit."),
    )
    rate = forms.FloatField(
        label=_("Audit rate"),
        required=False,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
        help_text=_("Audit only: the share of handed-off items drawn, above 0 and at most 1."),
    )
    labels_per_item = forms.IntegerField(
        label=_("Labels per item"),
        initial=2,
        min_value=1,
        max_value=MAX_LABELS_PER_ITEM,
        help_text=_("Different annotators asked for each drawn item."),
    )
    by_confidence = forms.BooleanField(
        label=_("Stratify by the model's confidence"),
        required=False,
        help_text=_("Calibration and certification only."),
    )


def request_draws_for_lead(*, project: Project) -> list[dict[str, Any]]:
    """Each draw with its requests by status, newest first (one query)."""
    rows = (
        LabelRequest.objects.filter(project=project)
        .values("kind", "draw")
        .annotate(
            total=Count("id"),
            open=Count("id", filter=Q(status=LabelRequest.Status.OPEN)),
            answered=Count("id", filter=Q(status=LabelRequest.Status.ANSWERED)),
            withdrawn=Count("id", filter=Q(status=LabelRequest.Status.WITHDRAWN)),
            items=Count("item_id", distinct=True),
            last=Max("created_at"),
        )
        .order_by("-last", "kind", "-draw")
    )
    return [dict(row) for row in rows]


@login_required
@require_http_methods(["GET", "POST"])
def label_requests_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    form = RequestDrawForm(request.POST if request.method == "POST" else None)
    result = None
    if form.is_bound and form.is_valid():
        try:
            result = label_requests_draw(project=project, user=cast(User, request.user), **form.cleaned_data)
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                for message in messages:
                    form.add_error(field if field in form.fields else None, message)
        else:
            form = RequestDrawForm()
    context = {"project": project, "form": form, "result": result, "draws": request_draws_for_lead(project=project)}
    if request.htmx and not form.is_bound:  # type: ignore[attr-defined]
        return render(request, "suggestions/partials/request_draws.html", context)
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "suggestions/requests.html", context, status=status)
