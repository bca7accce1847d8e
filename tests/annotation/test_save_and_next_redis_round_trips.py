"""The page's hot path stays within a fixed number of Redis round trips, as the SQL statements do: one before the
view (the session, the signed-in user and the project's criteria, config.cache_prefetch) and, for a save, one
after the commit (the dirty set and both pending flags, aggregation.dirty.changes_mark). Counted as redis-py sends
them (a pipeline or a script is one), with the caches and the broker on Redis as deployed.

The answers read ahead are the answers: a criterion renamed and a user deactivated are seen by the next request."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis.connection
from django.core.cache import caches
from django.test import Client, override_settings

from annotation.models import Annotation
from projects.models import Criterion
from tests.aggregation.conftest import celery_configured
from tests.annotation.conftest import item_url, next_url
from tests.annotation.test_save_and_next_query_budget import HTMX, _current_item, _form, _project
from tests.factories import UserFactory

pytestmark = [pytest.mark.redis, pytest.mark.fast_paths, pytest.mark.django_db(transaction=True)]

SAVE_AND_NEXT_ROUND_TRIPS = 2
NEXT_ROUND_TRIPS = 1


@pytest.fixture
def deployed_redis() -> Iterator[None]:
    """Both caches and the broker on the shared Redis as settings.py sets them up, under names of this test's own."""
    url = os.environ["PENUMBRA_TEST_REDIS_URL"]
    prefix = f"penumbra-test-{uuid.uuid4().hex[:10]}"
    backends = {
        "default": {"BACKEND": "config.cache.FailOpenRedisCache", "LOCATION": url, "KEY_PREFIX": f"{prefix}-d"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": prefix,
            "OPTIONS": {"serializer": "config.cache.JSONSerializer"},
        },
    }
    queue = f"penumbra-test-trips-{uuid.uuid4().hex[:10]}"
    with (
        override_settings(CACHES=backends),
        celery_configured(broker_url=url, task_always_eager=False, task_default_queue=queue),
    ):
        try:
            yield
        finally:
            client = caches["sessions"]._cache.get_client(write=True)
            for pattern in (f"{prefix}*", f"penumbra:{queue}:*", queue):
                for key in client.keys(pattern):
                    client.delete(key)


@pytest.fixture
def round_trips(monkeypatch) -> list[str]:
    """Every command (or pipeline, or script call) this process sends to Redis, by its first word."""
    sent: list[str] = []
    original = redis.connection.AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):
        first = command[0] if isinstance(command, list) else command
        sent.append(bytes(first).split(b"\r\n")[2].decode() if first else "")
        return original(self, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counting)
    return sent


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="config.auth.CachedModelBackend")
    return client


def test_save_and_next_and_next_item_stay_within_their_redis_round_trips(deployed_redis, round_trips):
    annotator = UserFactory(username="trips")
    project = _project(20, annotator)
    client = _signed_in(annotator)
    # Warm up: the caches filled, the item and project tasks pending (later saves send none, as under traffic).
    page = client.get(next_url(project), **HTMX).content.decode()
    item = _current_item(page)
    page = client.post(item_url(project, item), _form(page, item), **HTMX).content.decode()
    item = _current_item(page)
    form = _form(page, item)

    round_trips.clear()
    page = client.post(item_url(project, item), form, **HTMX).content.decode()
    assert "Saved." in page
    assert Annotation.objects.filter(item=item).count() == 1
    assert len(round_trips) <= SAVE_AND_NEXT_ROUND_TRIPS, f"save and next: {round_trips}"

    round_trips.clear()
    assert client.get(next_url(project), **HTMX).status_code == 200
    assert len(round_trips) <= NEXT_ROUND_TRIPS, f"next item: {round_trips}"


def test_what_is_read_ahead_follows_writes_made_before_the_next_request(deployed_redis):
    annotator = UserFactory(username="ahead")
    project = _project(5, annotator)
    client = _signed_in(annotator)
    assert client.get(next_url(project), **HTMX).status_code == 200  # caches criteria and the user

    criterion = Criterion.objects.get(project=project)
    criterion.name = "Renamed criterion"
    criterion.save()
    assert "Renamed criterion" in client.get(next_url(project), **HTMX).content.decode()

    annotator.is_active = False
    annotator.save()
    response = client.get(next_url(project))
    assert response.status_code == 302
    assert "/login" in response["Location"]


def test_a_cached_value_that_does_not_decode_falls_back_to_the_database(deployed_redis):
    annotator = UserFactory(username="garbled")
    project = _project(5, annotator)
    client = _signed_in(annotator)
    assert client.get(next_url(project), **HTMX).status_code == 200
    sessions = caches["sessions"]
    session_key = sessions.make_and_validate_key(f"django.contrib.sessions.cached_db{client.session.session_key}")
    sessions._cache.get_client(write=True).set(session_key, b"{not json")

    response = client.get(next_url(project), **HTMX)
    assert response.status_code == 200  # the session row in the database still signs them in
    assert 'data-item="' in response.content.decode()
