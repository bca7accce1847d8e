"""A Redis that stopped answering costs one request one socket timeout, not every call of every request.

A hung Redis (stopped, or a network that drops packets) accepts the connection and never answers; with the short
socket timeouts of config/settings.py each call gives up after a fraction of a second, but a login makes a dozen
cache calls (the session, the signed-in user, django-axes' counts) and would still wait seconds. After a call times
out or fails to connect, this process treats Redis as down for ``OPEN_SECONDS``: every call fails at once, as
against a dead Redis, which every cache user already survives (config/cache.py, config/sessions.py,
config/auth.py). The next call after that tries again. The state is per process on purpose: it is a view of this
process's connection, not something the processes must agree on.

Hand-written because redis-py's retry and health-check options retry a failing call; none of them stops trying.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from redis.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

OPEN_SECONDS = 5.0
_lock = threading.Lock()
_open_until = 0.0


def breaker_open() -> bool:
    return time.monotonic() < _open_until


def breaker_trip() -> None:
    global _open_until
    with _lock:
        first = not breaker_open()
        _open_until = time.monotonic() + OPEN_SECONDS
    if first:
        logger.warning("Redis did not answer in time; treated as down for %.0f s", OPEN_SECONDS)


def breaker_reset() -> None:
    global _open_until
    with _lock:
        _open_until = 0.0


def _refuse_while_open() -> None:
    if breaker_open():
        raise RedisConnectionError("Redis treated as down after a timeout (config.redis_breaker)")


class BreakerConnection(Connection):
    """redis-py's connection, failing at once while the breaker is open and opening it on a timeout or a refused
    connection."""

    def connect(self) -> None:
        _refuse_while_open()
        try:
            super().connect()
        except (RedisTimeoutError, RedisConnectionError):
            breaker_trip()
            raise

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        _refuse_while_open()
        try:
            super().send_packed_command(command, check_health)
        except (RedisTimeoutError, RedisConnectionError):
            breaker_trip()
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except (RedisTimeoutError, RedisConnectionError):
            breaker_trip()
            raise
