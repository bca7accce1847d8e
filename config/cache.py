"""Django's Redis cache, failing open while Redis is down.

The cache only holds login-failure counts (django-axes). A broker outage must not take logins down with it
(every login would answer 500), so while Redis cannot be reached a read finds nothing and a write is dropped, with
a warning in the log: throttling pauses for the outage, then resumes. Django's backend has no such option and
django-redis's IGNORE_EXCEPTIONS would mean a second Redis client library for these few lines.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)
_DOWN = (RedisConnectionError, RedisTimeoutError)


class FailOpenRedisCache(RedisCache):
    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        try:
            return super().get(key, default, version)
        except _DOWN:
            logger.warning("Redis cache unreachable: read of %s answered with the default", key)
            return default

    def add(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        try:
            return bool(super().add(key, value, timeout, version))
        except _DOWN:
            logger.warning("Redis cache unreachable: add of %s dropped", key)
            return True

    def set(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> None:
        try:
            super().set(key, value, timeout, version)
        except _DOWN:
            logger.warning("Redis cache unreachable: set of %s dropped", key)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        try:
            return int(super().incr(key, delta, version))
        except _DOWN:
            logger.warning("Redis cache unreachable: increment of %s dropped", key)
            return delta

    def delete(self, key: Any, version: int | None = None) -> bool:
        try:
            return bool(super().delete(key, version))
        except _DOWN:
            logger.warning("Redis cache unreachable: delete of %s dropped", key)
            return False
