"""Personas and a small project every behaviour test can start from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import cache, caches
from django.http import HttpRequest
from django.test import Client, override_settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from projects.models import Membership, Project
from tests.factories import (
    PASSWORD,
    ItemFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
    demo_project_create,
)

pytest_plugins = ["tests.browser_fixtures", "tests.live_server"]

# Property tests check what holds, never how fast: on a 2-core machine shared by two test workers, real worker
# processes and browsers, Hypothesis's timing checks (the per-example deadline, "input generation is slow") fail
# runs that found nothing wrong.
hypothesis_settings.register_profile("penumbra", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("penumbra")

# Modules that take long per test: a browser, real worker processes, or marked slow.
HEAVY_MARKS = ("browser", "redis", "slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, hand out the heavy modules first, whole and in collection order.

    `--dist loadgroup` sends xdist groups first (largest first), then single tests in collection order, so a slow
    module collected late keeps one worker busy while the other has nothing left. Heavy first (longest first, as a
    scheduler would), the run ends on short tests that balance across the workers. Every worker sorts the same
    collection the same way, as xdist requires.
    """
    if not hasattr(config, "workerinput"):
        return

    def module(item: pytest.Item) -> str:
        return str(getattr(getattr(item, "module", None), "__name__", item.nodeid))

    heavy_modules = {module(item) for item in items if any(item.get_closest_marker(m) for m in HEAVY_MARKS)}
    items.sort(key=lambda item: module(item) not in heavy_modules)


@pytest.fixture(autouse=True)
def _fast_paths_for_their_own_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests of the hand-made fast paths themselves (marked ``fast_paths``: query and round-trip budgets, the caches)
    keep them on when the suite runs with PENUMBRA_FAST_PATHS=0 (``make pytest-plain``). Only those tests get an
    override: pytest-django's ``settings`` fixture here would outlive other fixtures' teardowns."""
    if request.node.get_closest_marker("fast_paths") is None:
        yield
        return
    with override_settings(FAST_PATHS=True):
        yield


@pytest.fixture
def lead(db):
    return UserFactory(username="lead")


@pytest.fixture
def annotator(db):
    return UserFactory(username="annotator")


@pytest.fixture
def annotator2(db):
    return UserFactory(username="annotator2")


@pytest.fixture
def outsider(db):
    return UserFactory(username="outsider")


@pytest.fixture
def project(db, lead, annotator, annotator2) -> Project:
    """An IFS project in blind_sample display with a lead, two annotators and six items."""
    return demo_project_create(lead=lead, annotator=annotator, annotator2=annotator2)


@pytest.fixture
def other_project(db) -> Project:
    """A project none of the personas belongs to, with an annotator of its own."""
    project = ProjectFactory(name="Elsewhere")
    MembershipFactory(project=project, user=UserFactory(username="elsewhere"), role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(2, project=project)
    return project


@pytest.fixture(autouse=True)
def _forget_login_failures():
    """Login throttling counts failures in the cache; a test starts with none from the one before (nor with a
    signed-in user cached by config.auth under an id the database may hand out again)."""
    cache.clear()
    _sessions_cache_clear()
    yield
    cache.clear()
    _sessions_cache_clear()


def _sessions_cache_clear() -> None:
    # On Redis both caches live in one database, which cache.clear() has just emptied; only a separate store (the
    # in-process cache without Redis) needs emptying of its own.
    if settings.CACHES["sessions"].get("LOCATION") != settings.CACHES["default"].get("LOCATION"):
        caches["sessions"].clear()


def _logged_in(user) -> Client:
    client = Client()
    # django-axes checks every authentication against the request it came with.
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    assert client.login(request=request, username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def lead_client(lead) -> Client:
    return _logged_in(lead)


@pytest.fixture
def annotator_client(annotator) -> Client:
    return _logged_in(annotator)


@pytest.fixture
def outsider_client(outsider) -> Client:
    return _logged_in(outsider)
