"""Login throttling that an attacker cannot turn against others.

Device cookies (OWASP, "Slow down online guessing attacks with device cookies"): a browser that signed in to an
account gets a signed cookie naming that account (``DEVICE_COOKIE``, for ``LOGIN_DEVICE_COOKIE_DAYS``). While the
account is under attack from everywhere, a request with that cookie is judged only by its own (account, address)
count: the owner still signs in from a known device. Untrusted devices are slowed, not locked: past
``LOGIN_ACCOUNT_FAILURE_LIMIT`` failures the account takes one attempt from an unknown device every
``LOGIN_ACCOUNT_SLOW_SECONDS``, so a guesser spread over many addresses gets a few guesses a minute and no way to
lock the owner out.

django-axes counts failures per lockout-parameter group and locks when the largest count reaches one limit, so it
cannot lock the (account, address) pair after a few failures and the account alone only after many more. This
handler keeps axes' own pair lock (``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]``) and adds a second,
slower count per account across all addresses (``LOGIN_ACCOUNT_FAILURE_LIMIT``): a guesser at one address locks
only themselves out of that account, and a guesser spread over many addresses still meets a limit, at the cost of
slowing every unknown device for that account (the owner's known devices are spared; the cool-off ends it).
Token API access never goes through ``authenticate()``, so no lock reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from hashlib import sha256
from typing import Any

from axes.handlers.cache import AxesCacheHandler
from axes.helpers import get_cache_timeout, get_client_username
from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse


def _account_key(username: str) -> str:
    # "axes" in the name: the keys sit beside axes' own and are found (and cleared) with them.
    return f"axes-account-{sha256(username.encode()).hexdigest()}"


DEVICE_COOKIE = "penumbra_device"
_DEVICE_SALT = "penumbra.login-device"


def _username_digest(username: str) -> str:
    return sha256(username.encode()).hexdigest()


def device_cookie_value(username: str) -> str:
    """The signed cookie value that marks this browser as one that signed in to ``username`` (no username in
    clear: a digest of it, signed with the secret key)."""
    return signing.dumps({"u": _username_digest(username)}, salt=_DEVICE_SALT, compress=True)


def trusted_device(request: Any, username: str) -> bool:
    raw = getattr(request, "COOKIES", {}).get(DEVICE_COOKIE)
    if not raw or not username:
        return False
    try:
        data = signing.loads(raw, salt=_DEVICE_SALT, max_age=timedelta(days=settings.LOGIN_DEVICE_COOKIE_DAYS))
    except signing.BadSignature:
        return False
    return isinstance(data, dict) and data.get("u") == _username_digest(username)


class PairAndAccountCacheHandler(AxesCacheHandler):
    def _account_failures(self, request: Any, credentials: dict[str, Any] | None) -> int:
        username = get_client_username(request, credentials)
        if not username:
            return 0
        return int(self.cache.get(_account_key(username), default=0) or 0)

    def _slowed(self, request: Any, credentials: dict[str, Any] | None) -> bool:
        """Whether this attempt must wait: the account is under attack and the device is unknown, and another
        unknown device took the account's one attempt of the current slot (decided once per request)."""
        username = get_client_username(request, credentials)
        if not username or trusted_device(request, username):
            return False
        if self._account_failures(request, credentials) < settings.LOGIN_ACCOUNT_FAILURE_LIMIT:
            return False
        if not hasattr(request, "penumbra_login_slot"):
            slot = f"axes-account-slot-{_username_digest(username)}"
            request.penumbra_login_slot = bool(
                self.cache.add(key=slot, value=1, timeout=settings.LOGIN_ACCOUNT_SLOW_SECONDS)
            )
        return not request.penumbra_login_slot

    def is_locked(self, request: Any, credentials: dict[str, Any] | None = None) -> bool:
        if super().is_locked(request, credentials):  # the (account, address) pair
            return True
        slowed = self._slowed(request, credentials)
        if slowed:
            request.penumbra_login_slowed = True
        return slowed

    def user_login_failed(self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
        if request is not None and getattr(request, "penumbra_login_slowed", False):
            # Refused before the password was checked: not a guess, so nothing is counted; the middleware answers
            # with the lockout page, which says to wait a few seconds.
            request.axes_locked_out = True
            request.axes_credentials = credentials
            return
        already_locked = request is not None and getattr(request, "axes_locked_out", False)
        super().user_login_failed(sender, credentials, request=request, **kwargs)
        username = get_client_username(request, credentials) if request is not None else None
        if not username or already_locked or self.is_whitelisted(request, credentials):
            return
        if trusted_device(request, username):
            return  # the owner's typo on a known device counts for its own pair only
        key = _account_key(username)
        timeout = get_cache_timeout(request)
        if not self.cache.add(key=key, value=1, timeout=timeout):
            self.cache.incr(key=key, delta=1)
            self.cache.touch(key=key, timeout=timeout)

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        if request is not None:
            # DeviceCookieMiddleware sets it on the response: this browser is now a known device of the account.
            request.penumbra_device_cookie = device_cookie_value(user.get_username())
        if settings.AXES_RESET_ON_SUCCESS and request is not None and trusted_device(request, user.get_username()):
            return  # a known device's success does not wipe the count of an attack from elsewhere
        if settings.AXES_RESET_ON_SUCCESS:
            self.cache.delete(_account_key(user.get_username()))

    def reset_attempts(self, **kwargs: Any) -> int:
        count = super().reset_attempts(**kwargs)
        username = kwargs.get("username")
        if username:
            count += int(bool(self.cache.delete(_account_key(username))))
        return count


class DeviceCookieMiddleware:
    """Sets the device cookie chosen at a successful login (the handler has the request, not the response)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        value = getattr(request, "penumbra_device_cookie", None)
        if value:
            response.set_cookie(
                DEVICE_COOKIE,
                value,
                max_age=settings.LOGIN_DEVICE_COOKIE_DAYS * 86400,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
