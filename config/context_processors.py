"""Template context every page may need and that only settings decide."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def sign_in(request: HttpRequest) -> dict[str, bool]:
    """Whether the login page offers single sign-on (projects.sso)."""
    return {"oidc_enabled": bool(settings.OIDC_ENABLED)}
