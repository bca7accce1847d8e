"""With REDIS_URL the login-failure counts live in Redis, shared by every web process; while Redis is down logins
keep working (throttling pauses) instead of failing with a server error."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest
from axes.handlers.proxy import AxesProxyHandler
from django.core.cache import caches
from django.test import Client, override_settings
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def _login(username: str, password: str, address: str = "10.9.0.1"):
    return Client().post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def _axes_keys() -> list[bytes]:
    return caches["default"]._cache.get_client().keys("*axes*")


def _redis_cache(location: str, *, reachable: bool) -> Iterator[None]:
    backend = {
        "default": {"BACKEND": "config.cache.FailOpenRedisCache", "LOCATION": location},
        "sessions": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sessions-test"},
    }
    with override_settings(CACHES=backend):
        AxesProxyHandler.get_implementation(force=True)  # the handler keeps the cache it was made with
        try:
            yield
        finally:
            if reachable:  # only this test's keys: the Redis database may be shared with other test processes
                for key in _axes_keys():
                    caches["default"]._cache.get_client(write=True).delete(key)
    AxesProxyHandler.get_implementation(force=True)


@pytest.fixture
def shared_redis() -> Iterator[None]:
    yield from _redis_cache(os.environ["PENUMBRA_TEST_REDIS_URL"], reachable=True)


@pytest.fixture
def dead_redis() -> Iterator[None]:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield from _redis_cache(f"redis://127.0.0.1:{port}/0", reachable=False)


def test_failures_counted_in_redis_lock_the_account(shared_redis, settings):
    user = UserFactory(username="redis-target")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(user.username, "not the password")

    assert _login(user.username, PASSWORD).status_code == 429
    assert _axes_keys(), "the counts are in Redis, not in this process"


def test_logins_still_work_while_redis_is_down(dead_redis, settings):
    user = UserFactory(username="redis-down")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert _login(user.username, "not the password").status_code in (200, 429)

    assert _login(user.username, PASSWORD).status_code == 302
