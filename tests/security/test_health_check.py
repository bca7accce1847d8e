"""/healthz/ answers for docker-compose's health check whatever the host name and HTTPS settings."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_health_check_answers_over_plain_http_on_any_host(settings):
    settings.ALLOWED_HOSTS = ["penumbra.example.org"]
    settings.SECURE_SSL_REDIRECT = True

    response = Client().get("/healthz/", HTTP_HOST="127.0.0.1:8000")

    assert response.status_code == 200
    assert response.content == b"ok"
    # Everything else still gets the host check and the redirect.
    assert Client().get("/", HTTP_HOST="127.0.0.1:8000").status_code == 400
    assert Client().get("/", HTTP_HOST="penumbra.example.org").status_code == 301
