from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from annotation.page.home import home_rows_for_user
from projects.selectors import project_create_allowed


def _dashboard_url(project_id: int) -> str | None:
    # The dashboard lives in another app; the home page must not break while it is absent.
    try:
        return reverse("dashboard", kwargs={"project_id": project_id})
    except NoReverseMatch:
        return None


@login_required
def home(request: HttpRequest) -> HttpResponse:
    rows = home_rows_for_user(user=request.user)
    entries = [{"row": row, "dashboard_url": _dashboard_url(row.project.pk) if row.is_lead else None} for row in rows]
    # The new-project page lives in a floor above; the link shows only when that page is installed.
    can_create = project_create_allowed(request.user) and _url_exists("project_new")
    return render(request, "projects/home.html", {"entries": entries, "can_create": can_create})


def _url_exists(name: str) -> bool:
    try:
        reverse(name)
    except NoReverseMatch:
        return False
    return True


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """Your account: the interface language, kept in Django's language cookie by its set_language view."""
    return render(request, "projects/account.html", {"next": request.GET.get("next", "")})
