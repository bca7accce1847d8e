"""What every fault test starts from: a redis-server of its own, and httpx's request log kept out of the way."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.processes import RedisServer


@pytest.fixture(autouse=True)
def _quiet_httpx():
    # One INFO line per request would bury the failure in the captured log.
    logging.getLogger("httpx").setLevel(logging.WARNING)


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    """Started; the test may stop and start it again (the same port), stopped at the end."""
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()
