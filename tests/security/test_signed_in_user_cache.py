"""The signed-in user kept in Redis (config.auth) is plain JSON without the password hash, and a deactivation holds
from the very next request, even when a concurrent request read the old row while the save committed."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

import pytest
from django.contrib.auth.backends import ModelBackend
from django.core.cache import caches
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_sessions() -> Iterator[str]:
    """The deployed sessions cache (Redis, JSON serializer) under a prefix of this test's own."""
    prefix = f"penumbra-test-{uuid.uuid4().hex[:10]}"
    backends = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "default-test"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["PENUMBRA_TEST_REDIS_URL"],
            "KEY_PREFIX": prefix,
            "OPTIONS": {"serializer": "config.cache.JSONSerializer"},
        },
    }
    with override_settings(CACHES=backends):
        try:
            yield prefix
        finally:
            client = caches["sessions"]._cache.get_client(write=True)
            for key in client.keys(f"{prefix}:*"):
                client.delete(key)


def _raw(prefix: str, key: str) -> bytes | None:
    return caches["sessions"]._cache.get_client().get(f"{prefix}:1:{key}")


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="config.auth.CachedModelBackend")
    return client


def test_the_cached_user_is_json_without_the_password_hash(redis_sessions):
    user = UserFactory(username="cached-user")
    client = _signed_in(user)
    assert client.get(reverse("home")).status_code == 200

    raw = _raw(redis_sessions, f"user:{user.pk}")
    assert raw is not None, "the signed-in user was not cached"
    assert not raw.startswith(b"\x80"), "a pickle"
    entry = json.loads(raw)
    assert entry["id"] == user.pk
    assert entry["is_active"] is True
    assert set(entry) == {
        "v",
        "id",
        "username",
        "is_active",
        "is_staff",
        "is_superuser",
        "session_hash",
        "fallback_hashes",
    }
    user.refresh_from_db()
    assert user.password.encode() not in raw
    assert b"pbkdf2" not in raw

    session_raw = _raw(redis_sessions, "django.contrib.sessions.cached_db" + client.session.session_key)
    assert session_raw is not None
    assert json.loads(session_raw)["_auth_user_id"] == str(user.pk), "the session is JSON too"


def test_a_request_answered_from_the_cache_needs_no_user_query(redis_sessions):
    user = UserFactory(username="no-query")
    client = _signed_in(user)
    client.get(reverse("home"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("home")).status_code == 200
    assert not [q for q in queries.captured_queries if 'FROM "auth_user"' in q["sql"]]


def test_a_deactivation_holds_from_the_next_request(redis_sessions):
    user = UserFactory(username="deactivated")
    client = _signed_in(user)
    assert client.get(reverse("home")).status_code == 200
    assert _raw(redis_sessions, f"user:{user.pk}") is not None

    user.is_active = False
    user.save()

    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_request_that_read_the_row_before_the_deactivation_cannot_cache_it(redis_sessions, monkeypatch):
    """The race the tombstone closes: request A reads the active row, the deactivation commits, then A caches what
    it read. With delete-then-set, A's stale copy would keep the user signed in for the cache's minute."""
    user = UserFactory(username="raced")
    client = _signed_in(user)
    read = ModelBackend.get_user

    def read_then_deactivate(self, user_id):
        row = read(self, user_id)
        if row is not None and row.is_active:
            deactivated = type(row).objects.get(pk=row.pk)
            deactivated.is_active = False
            deactivated.save()
        return row

    monkeypatch.setattr(ModelBackend, "get_user", read_then_deactivate)
    assert client.get(reverse("home")).status_code == 200  # A: it read the row while the user was active
    monkeypatch.setattr(ModelBackend, "get_user", read)

    assert client.get(reverse("home")).status_code == 302, "the stale row was cached over the deactivation"
