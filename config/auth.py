"""The signed-in user from the cache: Django's ModelBackend, minus the user query on every request.

Every request behind login resolves ``request.user``; with the session already in Redis (config.sessions), that
row was the one statement left that each page view spends before doing anything. What a request needs of it is
kept in the sessions cache for a minute, as JSON (config.cache.JSONSerializer): the id, the username,
``is_active``, the role flags and the session hashes Django compares with the session's (``get_session_auth_hash``,
an HMAC of the password hash, and the same under each ``SECRET_KEY_FALLBACKS``). Never the password hash itself,
and never a pickle: whoever can read Redis learns no hash to crack, and whoever can write it cannot make the web
process unpickle code.

The user built from the entry has the other fields deferred (Django loads a deferred field on first use), so a
page that needs ``password`` or ``email`` (the admin's password change) still gets the stored row.

Invalidation: every save or delete of a user row writes a tombstone in place of the entry, in the writing
transaction and again after it commits, and readers only ever ``add`` an entry (set it if absent). A request that
read the old row before the commit cannot put it back over the tombstone, so a deactivation or a password change
holds from the next request. A tombstone lives ``USER_CACHE_SECONDS``; a write that bypasses ``save()``
(``QuerySet.update``) is seen within that time. ``last_login`` alone (written at every login) changes nothing
cached and is not a reason to forget. While the cache is unreachable the row is read as before; a change to an
existing user then fails, as a deactivated user must not stay signed in from a stale copy once Redis is back (new
users and logins go through).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from rest_framework.request import Request

from config.cache_prefetch import MISSING, prefetch_discard, prefetch_session_user, prefetch_take

logger = logging.getLogger(__name__)

USER_CACHE_SECONDS = 60
BACKEND = "config.auth.CachedModelBackend"
#: Bumped when the entry's shape changes, so an entry written by older code is read as a miss.
ENTRY_VERSION = 1
TOMBSTONE = "forgotten"
CACHED_FIELDS = ("id", "username", "is_active", "is_staff", "is_superuser")


def user_cache_key(user_id: Any) -> str:
    """The key of a user's entry in the sessions cache (config.cache_prefetch reads it ahead)."""
    return f"user:{user_id}"


prefetch_session_user(key=user_cache_key)


def _cache() -> Any:
    return caches[settings.SESSION_CACHE_ALIAS]


def user_entry(user: Any) -> dict[str, Any]:
    """What is kept for a signed-in user (plain data: the sessions cache stores it as JSON), no password hash."""
    entry: dict[str, Any] = {field: getattr(user, field) for field in CACHED_FIELDS}
    entry["v"] = ENTRY_VERSION
    entry["session_hash"] = user.get_session_auth_hash()
    entry["fallback_hashes"] = list(user.get_session_auth_fallback_hash())
    return entry


def user_from_entry(entry: Any) -> Any | None:
    """The user an entry stands for, its other fields deferred; None for a tombstone or an unknown shape."""
    if not isinstance(entry, dict) or entry.get("v") != ENTRY_VERSION:
        return None
    model = get_user_model()
    # from_db takes the loaded values in the model's field order and defers the rest.
    names = [f.attname for f in model._meta.concrete_fields if f.attname in CACHED_FIELDS]
    user = model.from_db("default", names, [entry[name] for name in names])
    session_hash, fallback_hashes = entry["session_hash"], tuple(entry["fallback_hashes"])
    cls = type(user)

    # The hashes come from the entry: computing them would load the deferred password (a query per request). Once
    # the password is loaded or set (a password change on this very object), the object's own value counts.
    def get_session_auth_hash() -> str:
        return cls.get_session_auth_hash(user) if "password" in user.__dict__ else session_hash

    def get_session_auth_fallback_hash() -> Any:
        return cls.get_session_auth_fallback_hash(user) if "password" in user.__dict__ else iter(fallback_hashes)

    user.get_session_auth_hash = get_session_auth_hash  # type: ignore[method-assign]
    user.get_session_auth_fallback_hash = get_session_auth_fallback_hash  # type: ignore[method-assign]
    return user


class CachedModelBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        if not settings.FAST_PATHS:
            return super().get_user(user_id)
        cache = _cache()
        try:
            raw = prefetch_take(settings.SESSION_CACHE_ALIAS, user_cache_key(user_id))
            if raw is MISSING:
                raw = cache.get(user_cache_key(user_id))
        except Exception:
            logger.warning("Session cache unreachable; reading the user from the database")
            return super().get_user(user_id)
        user = user_from_entry(raw)
        if user is None:
            user = super().get_user(user_id)
            if user is None:
                return None
            if raw is None:
                try:
                    # add, never set: a tombstone written by a save since our read must win (see the docstring).
                    cache.add(user_cache_key(user_id), user_entry(user), USER_CACHE_SECONDS)
                except Exception:
                    logger.warning("Session cache unreachable; the user is not cached")
        return user if self.user_can_authenticate(user) else None


def user_forget(*, user_id: Any) -> None:
    """Put a tombstone where the user's entry was. Raises while the cache is unreachable."""
    prefetch_discard(settings.SESSION_CACHE_ALIAS, user_cache_key(user_id))
    _cache().set(user_cache_key(user_id), TOMBSTONE, USER_CACHE_SECONDS)


def _forget_after_commit(user_id: Any) -> None:
    try:
        user_forget(user_id=user_id)
    except Exception:
        logger.error("Session cache unreachable after the commit; the tombstone written before it stands")


def on_user_written(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """post_save/post_delete receiver (cache upkeep only). The tombstone written now raises while the cache is
    unreachable, which rolls the write back; the one after the commit closes the window a concurrent reader had."""
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    user_id = instance.pk  # a deleted instance loses its pk before the commit
    if kwargs.get("created"):
        # Nobody can have read a row that did not exist, so a new account (a study participant arriving while Redis
        # is down) never waits for the cache; an entry left under a reused id just goes, when the cache answers.
        try:
            _cache().delete(user_cache_key(user_id))
        except Exception:
            logger.warning("Session cache unreachable; nothing to forget for new user %s", user_id)
        return
    user_forget(user_id=user_id)
    transaction.on_commit(lambda: _forget_after_commit(user_id))


def connect() -> None:
    from django.db.models.signals import post_delete, post_save

    model = get_user_model()
    post_save.connect(on_user_written, sender=model, dispatch_uid="user_forget_save")
    post_delete.connect(on_user_written, sender=model, dispatch_uid="user_forget_delete")


def signed_in_user(request: HttpRequest | Request) -> AbstractBaseUser:
    """The user a write acts for, whom the view's permission has already required to be signed in.

    Refuses an anonymous user (403) rather than hand one to a service, so a view that lost its check fails closed.
    """
    user = request.user
    if isinstance(user, AnonymousUser) or not user.is_authenticated:
        raise PermissionDenied
    return user
