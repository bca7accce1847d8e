"""Sessions are answered from the cache without a database query, logging out ends them, and an unreachable
cache falls back to the database instead of failing the request."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import UserFactory

LOCAL = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "default-test"},
    "sessions": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sessions-test"},
}
# Nothing listens on port 1: every call to the sessions cache fails at once.
UNREACHABLE = {
    "default": LOCAL["default"],
    "sessions": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"},
}


def _session_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("home")).status_code == 200
    return sum("django_session" in query["sql"] for query in queries.captured_queries)


def test_a_cached_session_needs_no_query_and_logout_ends_it(db, client, settings):
    settings.CACHES = LOCAL
    client.force_login(UserFactory(username="cached"))
    assert _session_queries(client) == 0
    client.post(reverse("logout"))
    assert client.get(reverse("home")).status_code == 302


def test_an_unreachable_cache_falls_back_to_the_database(db, client, settings):
    settings.CACHES = LOCAL
    client.force_login(UserFactory(username="outage"))
    settings.CACHES = UNREACHABLE
    assert _session_queries(client) == 1
