"""The liveness check that docker-compose and a load balancer poll: the process answers and reaches its database.

A middleware at the head of the chain rather than a view, so it answers before the host check (the check
calls it as http://127.0.0.1:8000 whatever ALLOWED_HOSTS says) and before the HTTPS redirect.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, HttpResponse

PATH = "/healthz/"


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != PATH:
            return self.get_response(request)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        response = HttpResponse("ok", content_type="text/plain")
        response["Cache-Control"] = "no-store"
        return response
