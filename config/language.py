"""Which language a page is in: one mechanism, Django's language cookie, set three ways.

LocaleMiddleware picks the cookie, else the browser's Accept-Language, else ``LANGUAGE_CODE``. The cookie is set
by the account page (Django's ``set_language`` view) and by a ``?lang=`` on any URL, which is how a lead gives a
study participant their language: the study link carries ``?lang=hi`` and every later page of that browser stays in
Hindi. A cookie rather than the session because a participant's session starts only after the link is opened, and
a member's choice should outlive logging out. An unknown ``?lang=`` is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation

LANGUAGE_PARAMETER = "lang"


def language_supported(code: str) -> str | None:
    """The interface language ``code`` names (``zh-Hans`` and ``zh_hans`` alike), or None when there is none."""
    if not code or len(code) > 16:
        return None
    try:
        return translation.get_supported_language_variant(code.replace("_", "-").lower())
    except LookupError:
        return None


def settings_languages() -> list[str]:
    """The codes of the interface languages, as settings.LANGUAGES lists them."""
    return [code for code, _ in settings.LANGUAGES]


class ChosenLanguageMiddleware:
    """After LocaleMiddleware: a valid ``?lang=`` activates that language now and keeps it in the cookie."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        chosen = language_supported(request.GET.get(LANGUAGE_PARAMETER, ""))
        if chosen is None:
            return self.get_response(request)
        translation.activate(chosen)
        request.LANGUAGE_CODE = chosen
        response = self.get_response(request)
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            chosen,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            path=settings.LANGUAGE_COOKIE_PATH,
            domain=settings.LANGUAGE_COOKIE_DOMAIN,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
        )
        return response
