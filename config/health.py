"""The liveness check that docker-compose and a load balancer poll: the process answers and reaches its database."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")
