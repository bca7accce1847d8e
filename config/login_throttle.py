"""Login throttling that an attacker cannot turn against others.

django-axes counts failures per lockout-parameter group and locks when the largest count reaches one limit, so it
cannot lock the (account, address) pair after a few failures and the account alone only after many more. This
handler keeps axes' own pair lock (``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]``) and adds a second,
slower count per account across all addresses (``LOGIN_ACCOUNT_FAILURE_LIMIT``): a guesser at one address locks
only themselves out of that account, and a guesser spread over many addresses still meets a limit, at the cost of
locking the account for its owner too (the trade every per-account limit makes; the cool-off ends it).
Token API access never goes through ``authenticate()``, so no lock reaches it.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

from axes.handlers.cache import AxesCacheHandler
from axes.helpers import get_cache_timeout, get_client_username, get_failure_limit
from axes.signals import user_locked_out
from django.conf import settings


def _account_key(username: str) -> str:
    # "axes" in the name: the keys sit beside axes' own and are found (and cleared) with them.
    return f"axes-account-{sha256(username.encode()).hexdigest()}"


class PairAndAccountCacheHandler(AxesCacheHandler):
    def _account_failures(self, request: Any, credentials: dict[str, Any] | None) -> int:
        username = get_client_username(request, credentials)
        if not username:
            return 0
        return int(self.cache.get(_account_key(username), default=0) or 0)

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        pair = super().get_failures(request, credentials)
        if self._account_failures(request, credentials) >= settings.LOGIN_ACCOUNT_FAILURE_LIMIT:
            return max(pair, get_failure_limit(request, credentials))
        return pair

    def user_login_failed(self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
        already_locked = request is not None and getattr(request, "axes_locked_out", False)
        super().user_login_failed(sender, credentials, request=request, **kwargs)
        username = get_client_username(request, credentials) if request is not None else None
        if not username or already_locked or self.is_whitelisted(request, credentials):
            return
        key = _account_key(username)
        timeout = get_cache_timeout(request)
        if self.cache.add(key=key, value=1, timeout=timeout):
            count = 1
        else:
            count = self.cache.incr(key=key, delta=1)
            self.cache.touch(key=key, timeout=timeout)
        if count >= settings.LOGIN_ACCOUNT_FAILURE_LIMIT and not request.axes_locked_out:
            request.axes_locked_out = True
            request.axes_credentials = credentials
            user_locked_out.send("axes", request=request, username=username, ip_address=request.axes_ip_address)

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        if settings.AXES_RESET_ON_SUCCESS:
            self.cache.delete(_account_key(user.get_username()))

    def reset_attempts(self, **kwargs: Any) -> int:
        count = super().reset_attempts(**kwargs)
        username = kwargs.get("username")
        if username:
            count += int(bool(self.cache.delete(_account_key(username))))
        return count
