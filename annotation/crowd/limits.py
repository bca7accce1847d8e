"""Abuse limits on study links: how many new participants a link takes per minute, and one address starts per hour.

A study link is public (the token is the only secret), so a script that found one could make participants, each a
user row, as fast as it likes. Two fixed-window counters in the default cache (Redis in production, shared by every
web process) cap that: one per link and minute, one per client address (``config.client_address``, through the
trusted proxies) and hour. Only newcomers are counted; a returning participant always gets back in. While Redis is
down the cache fails open (``config.cache``): the limits pause rather than keep everyone out.

Hand-written rather than django-ratelimit: two counters with ``add`` and ``incr`` are the whole of it, and the
library would bring its own decorators and cache checks for a single call site.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from hashlib import sha256

from django.conf import settings
from django.core.cache import caches
from django.utils.translation import gettext


@dataclass(frozen=True)
class JoinRefusal:
    message: str
    retry_after: int  # seconds until the window that refused ends


def _count(key: str, window: int) -> int:
    cache = caches["default"]
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr: this is the first of a new window
        cache.add(key, 1, timeout=window)
        return 1


def _wait_over_limit(name: str, *, window: int, limit: int, now: float) -> int | None:
    """Counts one in the fixed window of ``window`` seconds that ``now`` falls in: when the count is over ``limit``,
    the seconds until that window ends, else None."""
    if _count(f"study-join:{name}:{int(now // window)}", window) <= limit:
        return None
    return window - int(now % window)


def study_join_check(*, link_id: int, address: str, now: float | None = None) -> JoinRefusal | None:
    """Counts one new participant against both limits; a refusal when either is over. The address is checked
    first, so one noisy address does not use up the link's budget for everyone else."""
    now = time.time() if now is None else now
    address_digest = sha256(address.encode()).hexdigest()[:32]
    per_address = settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR
    per_link = settings.STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE
    limits = (
        (
            f"address:{address_digest}",
            3600,
            per_address,
            gettext(
                "Too many new participants started from your network in the last hour (at most %(limit)d). "
                "If you were sent here by a study platform, please try again later or contact the researchers."
            )
            % {"limit": per_address},
        ),
        (
            f"link:{link_id}",
            60,
            per_link,
            gettext(
                "This study is taking in many participants at once (at most %(limit)d a minute). "
                "Please wait a minute and open your study link again: nothing was created."
            )
            % {"limit": per_link},
        ),
    )
    for name, window, limit, message in limits:
        if (wait := _wait_over_limit(name, window=window, limit=limit, now=now)) is not None:
            return JoinRefusal(message=message, retry_after=wait)
    return None
