"""The signed-in user from the cache: Django's ModelBackend, minus the user query on every request.

Every request behind login resolves ``request.user``; with the session already in Redis (config.sessions), that
row was the one statement left that each page view spends before doing anything. The user is kept in the sessions
cache for a minute and forgotten at every save or delete of the user row (a password change, a deactivation), so
Django's session-hash check and ``is_active`` still see the stored row. A write that bypasses ``save()``
(``QuerySet.update``) is seen within ``USER_CACHE_SECONDS``. Without the cache (Redis unreachable) the row is read
as before.
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
from django.http import HttpRequest
from rest_framework.request import Request

logger = logging.getLogger(__name__)

USER_CACHE_SECONDS = 60
BACKEND = "config.auth.CachedModelBackend"


def _key(user_id: Any) -> str:
    return f"user:{user_id}"


class CachedModelBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        cache = caches[settings.SESSION_CACHE_ALIAS]
        try:
            user = cache.get(_key(user_id))
        except Exception:
            logger.warning("Session cache unreachable; reading the user from the database")
            return super().get_user(user_id)
        if user is None:
            user = super().get_user(user_id)
            if user is None:
                return None
            try:
                cache.set(_key(user_id), user, USER_CACHE_SECONDS)
            except Exception:
                logger.warning("Session cache unreachable; the user is not cached")
        return user if self.user_can_authenticate(user) else None


def user_forget(sender: Any, instance: Any, **kwargs: Any) -> None:
    """Drop the cached copy of a saved or deleted user. Raises while the cache is unreachable: a deactivated user
    must not stay signed in from a stale copy (the surrounding transaction rolls the change back)."""
    caches[settings.SESSION_CACHE_ALIAS].delete(_key(instance.pk))


def connect() -> None:
    from django.db.models.signals import post_delete, post_save

    model = get_user_model()
    post_save.connect(user_forget, sender=model, dispatch_uid="user_forget_save")
    post_delete.connect(user_forget, sender=model, dispatch_uid="user_forget_delete")


def signed_in_user(request: HttpRequest | Request) -> AbstractBaseUser:
    """The user a write acts for, whom the view's permission has already required to be signed in.

    Refuses an anonymous user (403) rather than hand one to a service, so a view that lost its check fails closed.
    """
    user = request.user
    if isinstance(user, AnonymousUser) or not user.is_authenticated:
        raise PermissionDenied
    return user
