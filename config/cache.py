"""Django's Redis cache, failing open while Redis is down.

The cache only holds login-failure counts (django-axes). A broker outage must not take logins down with it
(every login would answer 500), so while Redis cannot be reached a read finds nothing and a write is dropped, with
a warning in the log: throttling pauses for the outage, then resumes. Django's backend has no such option and
django-redis's IGNORE_EXCEPTIONS would mean a second Redis client library for these few lines.
"""

from __future__ import annotations

import json
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


class JSONSerializer:
    """The sessions cache's serializer: JSON instead of Django's pickle.

    It holds session data (already JSON for the database row, Django's default session serializer) and the
    signed-in user entries of config.auth. Pickle would let anyone who can write to Redis run code in the web
    process at the next read; JSON gives them nothing but data. Integers stay raw, as in Django's serializer, so
    ``incr`` keeps working.
    """

    def dumps(self, obj: Any) -> Any:
        if type(obj) is int:
            return obj
        return json.dumps(obj, separators=(",", ":")).encode()

    def loads(self, data: Any) -> Any:
        try:
            return int(data)
        except ValueError:
            return json.loads(data)
