"""Sessions read from the cache, written to both: Django's cached_db, except that a cache outage only costs speed.

Every request reads its session; from Redis that is no database query. The database row stays the record, so an
unreachable Redis falls back to it instead of failing the request (Django's own ``load`` would raise while putting
the row back into the cache). Deleting still raises when the cache cannot be reached: a logout must not leave the
session valid in the cache.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.core.cache import caches

logger = logging.getLogger(__name__)


class SessionStore(cached_db.SessionStore):
    @property
    def _sessions_cache(self) -> Any:
        return caches[settings.SESSION_CACHE_ALIAS]

    def load(self) -> dict[str, Any]:
        try:
            data = self._sessions_cache.get(self.cache_key)
        except Exception:
            data = None
        if data is not None:
            return dict(data)
        stored = self._get_session_from_db()  # type: ignore[attr-defined]  # private in the stubs, public in Django
        if not stored:
            return {}
        data = self.decode(stored.session_data)
        try:
            self._sessions_cache.set(self.cache_key, data, self.get_expiry_age(expiry=stored.expire_date))
        except Exception:
            logger.warning("Session cache unreachable; reading sessions from the database")
        return dict(data)

    def exists(self, session_key: str) -> bool:
        try:
            if session_key and (self.cache_key_prefix + session_key) in self._sessions_cache:
                return True
        except Exception:
            logger.warning("Session cache unreachable; checking the database")
        return bool(session_key) and super(cached_db.SessionStore, self).exists(session_key)
