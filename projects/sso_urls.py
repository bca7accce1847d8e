"""The provider's two addresses (mozilla-django-oidc's views), answered only when ``OIDC_ENABLED``."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView


def _when_enabled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.OIDC_ENABLED:
            raise Http404("Single sign-on is off.")
        return view(request, *args, **kwargs)

    return guarded


urlpatterns = [
    path("oidc/authenticate/", _when_enabled(OIDCAuthenticationRequestView.as_view()), name="oidc_authentication_init"),
    path(
        "oidc/callback/", _when_enabled(OIDCAuthenticationCallbackView.as_view()), name="oidc_authentication_callback"
    ),
]
