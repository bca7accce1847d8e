"""PostgreSQL without Redis, with more than one web process: sessions, signed-in users and login-failure counts
live in PostgreSQL, not in each process's memory. A logout through one process ends the session in the other at
once, and so does a deactivation; failed logins are counted once for all of them."""

from __future__ import annotations

import re

import httpx
import pytest
from django.core.management import call_command
from django.test import override_settings

from projects.models import Membership
from tests.factories import PASSWORD, ItemFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.stack import penumbra_stack

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE_CACHE = {
    "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "penumbra_cache"},
    "sessions": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
}
ROUNDS = 20
# One gunicorn master with the deployed default of two worker processes; each request below opens a new connection,
# which either worker may accept (as the probe that found the per-process sessions did).
TWO_WORKERS = {"WEB_CONCURRENCY": "2"}


def _log_in(client: httpx.Client, username: str, password: str = PASSWORD) -> httpx.Response:
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
    return client.post("/accounts/login/", data=form)


def _signed_in_everywhere(urls: list[str], cookies: httpx.Cookies) -> list[bool]:
    """Each request on a new connection, so either worker process may answer it."""
    answers = []
    for _ in range(ROUNDS):
        with httpx.Client(base_url=urls[0], cookies=cookies, timeout=30) as fresh:
            answers.append(fresh.get("/").status_code == 200)
    return answers


@pytest.fixture
def cache_table(transactional_db):
    # What `migrate` makes in such a deployment (projects.apps); the test database was migrated with Redis.
    with override_settings(CACHES=DATABASE_CACHE):
        call_command("createcachetable", verbosity=0)


def test_a_logout_and_a_deactivation_reach_every_process(cache_table, tmp_path):
    project = ProjectFactory(name="No Redis")
    person = UserFactory(username="two-process-annotator")
    MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(2, project=project)
    with penumbra_stack(tmp_path, redis_url="", workers=0, env=TWO_WORKERS) as stack:
        first = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
        assert _log_in(first, person.username).url.path == "/"
        assert all(_signed_in_everywhere(stack.urls, first.cookies)), "signed in through both processes"
        first.post("/accounts/logout/", data={"csrfmiddlewaretoken": first.cookies["csrftoken"]})
        assert not any(_signed_in_everywhere(stack.urls, first.cookies)), "a process still knew the session"

        second = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
        assert _log_in(second, person.username).url.path == "/"
        assert all(_signed_in_everywhere(stack.urls, second.cookies))
        person.is_active = False
        person.save(update_fields=["is_active"])
        assert not any(_signed_in_everywhere(stack.urls, second.cookies)), "a process still knew the user"


def test_failed_logins_are_counted_across_processes(cache_table, tmp_path, settings):
    person = UserFactory(username="two-process-target")
    limit = settings.AXES_FAILURE_LIMIT
    with penumbra_stack(tmp_path, redis_url="", workers=0, env=TWO_WORKERS) as stack:
        for _ in range(limit):
            with httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30) as fresh:
                _log_in(fresh, person.username, password="wrong")
        with httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30) as fresh:
            refused = _log_in(fresh, person.username)
        assert refused.url.path != "/", "the failures in the other process were not counted"
