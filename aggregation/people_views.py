"""The people page: invite by username or e-mail (with the invitation link to pass on when no mail is configured),
change a role, remove a member (their labels stay, shown as a former member's), and each person's progress."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from aggregation.people_selectors import people_get
from aggregation.project_forms import InviteForm, RoleForm
from aggregation.views import _apply_errors
from projects.models import Membership
from projects.people import invitation_mail_configured, member_invite_by_address, member_remove, member_role_change
from projects.selectors import project_get_for_lead


def _base_url(request: HttpRequest) -> str:
    return settings.PENUMBRA_BASE_URL or request.build_absolute_uri("/")


@login_required
@require_http_methods(["GET", "POST"])
def people_page(request: HttpRequest, project_id: int) -> HttpResponse:
    people = people_get(user=request.user, project_id=project_id)
    form = InviteForm(request.POST if request.method == "POST" else None)
    invitation = None
    if form.is_bound and form.is_valid():
        try:
            invitation = member_invite_by_address(
                project=people.project,
                address=form.cleaned_data["address"],
                role=form.cleaned_data["role"],
                base_url=_base_url(request),
            )
        except ValidationError as error:
            _apply_errors(form, error)
        else:
            people = people_get(user=request.user, project_id=project_id)
            form = InviteForm()
    context = {
        "project": people.project,
        "people": people,
        "form": form,
        "invitation": invitation,
        "mail_configured": invitation_mail_configured(),
        "roles": Membership.Role.choices,
    }
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "dashboard/people.html", context, status=status)


@login_required
@require_POST
def member_role(request: HttpRequest, project_id: int, user_id: int) -> HttpResponse:
    project = project_get_for_lead(user=request.user, project_id=project_id)
    form = RoleForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError({"role": _("Pick a role.")})
        member_role_change(project=project, user_id=user_id, role=form.cleaned_data["role"])
    except ValidationError as refused:
        messages.error(request, " ".join(refused.messages))
    else:
        messages.success(request, _("Role changed."))
    return redirect("people_page", project_id=project.pk)


@login_required
@require_http_methods(["GET", "POST"])
def member_remove_page(request: HttpRequest, project_id: int, user_id: int) -> HttpResponse:
    people = people_get(user=request.user, project_id=project_id)
    person = next((row for row in people.members if row.user_id == user_id), None)
    if person is None:
        return redirect("people_page", project_id=people.project.pk)
    error = None
    if request.method == "POST":
        try:
            member_remove(project=people.project, user_id=user_id)
        except ValidationError as refused:
            error = " ".join(refused.messages)
        else:
            messages.success(request, _("%(name)s is no longer a member.") % {"name": person.username})
            return redirect("people_page", project_id=people.project.pk)
    context = {"project": people.project, "person": person, "error": error}
    return render(request, "dashboard/member_remove.html", context, status=400 if error else 200)
