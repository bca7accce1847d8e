from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from annotation.page.home import home_rows_for_user


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
    return render(request, "projects/home.html", {"entries": entries})


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """Your account: the interface language, kept in Django's language cookie by its set_language view."""
    return render(request, "projects/account.html", {"next": request.GET.get("next", "")})
