"""A real Penumbra for tests that talk HTTP: gunicorn on a free port of 127.0.0.1 and a Celery worker on Redis, both
on the test database, sharing one data directory (uploads and exports). One per test module (see ``penumbra_server``).

The test process creates users and tokens through the ORM (committed at once); everything else goes through HTTP.
When the module is done both processes stop and the database is flushed, so later tests start from empty tables.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command

from tests.processes import shared_redis_url
from tests.stack import Stack, penumbra_stack

# Plain synchronous workers: these modules test the API, the client and the API guide's walk-through, not the
# deployed server settings (the fault tests start those).
GUNICORN = ("config.wsgi:application", "--workers", "2")


@pytest.fixture(scope="module")
def penumbra_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Stack]:
    try:
        with penumbra_stack(
            tmp_path_factory.mktemp("live"),
            redis_url=shared_redis_url(),
            env={"DB_CONN_MAX_AGE": "0"},
            gunicorn=GUNICORN,
        ) as stack:
            yield stack
    finally:
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)
