"""Sessions read from the cache, written to both: Django's cached_db, except that a cache outage only costs speed.

Every request reads its session; from Redis that is no database query. The database row stays the record, so an
unreachable Redis falls back to it instead of failing the request (Django's own ``load`` would raise while putting
the row back into the cache, and its ``delete`` while logging out or cycling the key at login).

A session's copy in the cache lives at most ``SESSION_CACHE_SECONDS``. That bounds the one thing an outage can
leave behind: a logout while Redis is unreachable deletes the database row but cannot delete the cached copy, and
a Redis that kept its data (append-only file) would answer with it until it expires. Reading the row again every
few minutes costs one query per session, not per request.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.db import SessionStore as DBStore
from django.core.cache import caches

from config.cache_prefetch import MISSING, prefetch_discard, prefetch_take

logger = logging.getLogger(__name__)

SESSION_CACHE_SECONDS = 300


class SessionStore(cached_db.SessionStore):
    @property
    def _sessions_cache(self) -> Any:
        return caches[settings.SESSION_CACHE_ALIAS]

    def _cache_seconds(self, **kwargs: Any) -> int:
        return max(0, min(SESSION_CACHE_SECONDS, self.get_expiry_age(**kwargs)))

    def load(self) -> dict[str, Any]:
        try:
            data = prefetch_take(settings.SESSION_CACHE_ALIAS, self.cache_key)
            if data is MISSING:
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
            self._sessions_cache.set(self.cache_key, data, self._cache_seconds(expiry=stored.expire_date))
        except Exception:
            logger.warning("Session cache unreachable; reading sessions from the database")
        return dict(data)

    def exists(self, session_key: str) -> bool:
        try:
            if session_key and (self.cache_key_prefix + session_key) in self._sessions_cache:
                return True
        except Exception:
            logger.warning("Session cache unreachable; checking the database")
        return bool(session_key) and DBStore.exists(self, session_key)

    def save(self, must_create: bool = False) -> None:
        DBStore.save(self, must_create)
        prefetch_discard(settings.SESSION_CACHE_ALIAS, self.cache_key)
        try:
            session = self._session  # type: ignore[attr-defined]  # SessionBase API the stubs leave out
            self._sessions_cache.set(self.cache_key, session, self._cache_seconds())
        except Exception:
            logger.warning("Session cache unreachable; the session is saved in the database only")

    def delete(self, session_key: str | None = None) -> None:
        DBStore.delete(self, session_key)
        key = session_key if session_key is not None else self.session_key
        if key is None:
            return
        prefetch_discard(settings.SESSION_CACHE_ALIAS, self.cache_key_prefix + key)
        try:
            self._sessions_cache.delete(self.cache_key_prefix + key)
        except Exception:
            logger.error(
                "Session cache unreachable; the ended session is gone from the database, a cached copy expires "
                "within %s s",
                SESSION_CACHE_SECONDS,
            )
