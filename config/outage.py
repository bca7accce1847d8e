"""While PostgreSQL cannot be reached, answer 503 with ``Retry-After`` instead of Django's "Server Error (500)".

A database that is restarting or briefly unreachable (a connection refused, a connection dropped mid-request) is
not a bug in the request: the API answers in its JSON error shape and a page says to try again shortly, both with
``Retry-After``, so clients (penumbra_client retries 503) and people wait and retry. A save retried with the same
client token is exact, whether or not the first attempt was stored.

It is Django's 500 handler rather than a middleware: the database is first needed by the session and user
middleware, before any view, and only the handler sees exceptions from every layer. Other errors still answer 500.
"""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views.defaults import server_error as django_server_error

logger = logging.getLogger(__name__)

DATABASE_DOWN = (OperationalError, InterfaceError)


def _database_down() -> bool:
    exc = sys.exc_info()[1]
    while exc is not None:
        if isinstance(exc, DATABASE_DOWN):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def server_error(request: HttpRequest) -> HttpResponse:
    if not _database_down():
        return django_server_error(request)
    retry_after = str(getattr(settings, "DATABASE_RETRY_AFTER_SECONDS", 5))
    logger.warning("Database unavailable; answered %s with 503", request.path)
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"detail": "The database is briefly unavailable; retry shortly.", "errors": {}}, status=503
        )
    else:
        # A page of its own, without the base layout: that would look up the signed-in user in the database.
        body = loader.render_to_string("503.html", {"retry_after": retry_after})
        response = HttpResponse(body, status=503)
    response["Retry-After"] = retry_after
    response["Cache-Control"] = "no-store"
    return response
