"""One Redis round trip for the cache reads every signed-in request starts with.

A request behind login read, one after the other: its session (config.sessions), the signed-in user the session
names (config.auth) and, on a project's pages, the project's criteria (projects.selectors). Three round trips in
sequence, each a thread hand-off under load, before the view did anything. A six-line Lua script on the Redis
server follows the session to its user, so one call answers all three; the readers then take their value from
this request's memo instead of asking Redis.

Written by hand because neither Django's cache API nor django-redis can read a key whose name is inside another
key's value in one call. What it may not do is change an answer: a value is taken once (a second read in the
request asks Redis), a write in the request discards the memo's copy (``prefetch_discard``), and if the call
fails each reader meets the same exception its own read would have raised and falls back exactly as before.

The script reads the user's key without naming it in KEYS, which a Redis Cluster refuses; Penumbra uses one
Redis server. It runs on a redis-py client of its own, made from the cache's LOCATION and OPTIONS as Django makes
its own, and values are decoded with the serializer each cache is configured with (JSON for sessions and users,
Django's ``RedisSerializer`` for the default cache, which only Penumbra writes): nothing private of Django's cache
is read. ``FAST_PATHS`` off turns the read-ahead off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisSerializer
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

MISSING = object()
# KEYS[1]: the session, KEYS[2..]: other keys; ARGV[1]: the user key's prefix (the user id follows it).
SCRIPT = """
local session = redis.call('GET', KEYS[1])
local user = false
if session then
  local ok, data = pcall(cjson.decode, session)
  if ok and type(data) == 'table' and data['_auth_user_id'] then
    user = redis.call('GET', ARGV[1] .. tostring(data['_auth_user_id']))
  end
end
local found = {session, user}
for i = 2, #KEYS do found[#found + 1] = redis.call('GET', KEYS[i]) end
return found
"""

_memo: ContextVar[dict[tuple[str, str], Any] | None] = ContextVar("cache_prefetch_memo", default=None)
# View keyword -> (cache alias, key for that keyword's value): filled by the apps (projects: a project's criteria).
_by_view_keyword: dict[str, tuple[str, Callable[[Any], str]]] = {}
# One redis-py Script (it keeps the script's SHA and loads it on a server that lacks it), and one client per
# server location, each with its connection pool.
_script: list[Any] = []
_clients: dict[str, redis.Redis] = {}
# The key of the signed-in user's entry in the sessions cache, given the session's user id (config.auth sets it).
_session_user_key: list[Callable[[Any], str]] = []


class _Failed:
    def __init__(self, error: Exception) -> None:
        self.error = error


def prefetch_for_view_keyword(*, keyword: str, alias: str, key: Callable[[Any], str]) -> None:
    """Register a cache key to read ahead whenever a view is called with this keyword argument."""
    _by_view_keyword[keyword] = (alias, key)


def prefetch_session_user(*, key: Callable[[Any], str]) -> None:
    """Register how the signed-in user's entry is keyed in the sessions cache: it is read ahead with the session."""
    _session_user_key[:] = [key]


def prefetch_take(alias: str, key: str) -> Any:
    """The value read ahead for this cache key in this request (None: not in the cache), once; ``MISSING`` when it
    was not read ahead. Raises what the read raised, if it failed."""
    memo = _memo.get()
    if not memo:
        return MISSING
    found = memo.pop((alias, key), MISSING)
    if isinstance(found, _Failed):
        raise found.error
    return found


def prefetch_discard(alias: str, key: str) -> None:
    """Forget a value read ahead: the request has just written or deleted that key."""
    memo = _memo.get()
    if memo:
        memo.pop((alias, key), None)


def _redis_location(alias: str) -> str | None:
    options = settings.CACHES.get(alias, {})
    backend = str(options.get("BACKEND", ""))
    if not (backend.endswith("RedisCache") and options.get("LOCATION")):
        return None
    return str(options["LOCATION"])


def _run(client: Any, keys: list[str], user_prefix: str) -> list[Any]:
    if not _script:
        _script.append(client.register_script(SCRIPT))
    found = _script[0](keys=keys, args=[user_prefix], client=client)
    return list(found) + [None] * (len(keys) + 1 - len(found))  # Redis drops trailing nils


class CachePrefetchMiddleware:
    """Read ahead, just before the view runs (after the URL is resolved, before anything opens the session)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _memo.set(None)
        try:
            return self.get_response(request)
        finally:
            _memo.reset(token)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]) -> None:
        session = getattr(request, "session", None)
        session_key = getattr(session, "session_key", None)
        location = _redis_location(settings.SESSION_CACHE_ALIAS)
        # ``accessed``: something read the session already, so its data is in hand and nothing is left to read ahead.
        loaded = getattr(session, "accessed", False)
        if not settings.FAST_PATHS or not session_key or location is None or not _session_user_key or loaded:
            return
        sessions = caches[settings.SESSION_CACHE_ALIAS]
        wanted = [(settings.SESSION_CACHE_ALIAS, session.cache_key)]  # type: ignore[union-attr]
        for keyword, (alias, key) in _by_view_keyword.items():
            if keyword in kwargs and _redis_location(alias) == location:
                wanted.append((alias, key(kwargs[keyword])))
        full_keys = [caches[alias].make_and_validate_key(key) for alias, key in wanted]
        user_cache_key = _session_user_key[0]
        user_prefix = sessions.make_and_validate_key(user_cache_key(""))
        try:
            session_raw, user_raw, *others = _run(_client(settings.SESSION_CACHE_ALIAS), full_keys, user_prefix)
            memo = {pair: _decode(pair[0], raw) for pair, raw in zip(wanted, [session_raw, *others], strict=True)}
            data = memo[wanted[0]]
            if isinstance(data, dict) and "_auth_user_id" in data:
                user_key = user_cache_key(data["_auth_user_id"])
                memo[(settings.SESSION_CACHE_ALIAS, user_key)] = _decode(settings.SESSION_CACHE_ALIAS, user_raw)
        except Exception as error:
            # Unreachable, or a value that does not decode: each reader meets this error as its own read would have
            # and falls back the same way (the database for sessions and users, the rows for criteria).
            logger.warning("Cache read-ahead failed (%s); the readers fall back", type(error).__name__)
            _memo.set(dict.fromkeys(wanted, _Failed(error)))
            return
        _memo.set(memo)


_NOT_POOL_OPTIONS = ("serializer", "parser", "pool_class")


def _client(alias: str) -> redis.Redis:
    """A client for the cache's server, made as Django's RedisCache makes its own (first server of LOCATION,
    OPTIONS but the serializer and parser as connection options), once per location."""
    location = str(settings.CACHES[alias]["LOCATION"]).split(",")[0]
    client = _clients.get(location)
    if client is None:
        options = {k: v for k, v in settings.CACHES[alias].get("OPTIONS", {}).items() if k not in _NOT_POOL_OPTIONS}
        client = _clients[location] = redis.Redis(connection_pool=redis.ConnectionPool.from_url(location, **options))
    return client


def _decode(alias: str, raw: Any) -> Any:
    if raw is None:
        return None
    serializer = settings.CACHES[alias].get("OPTIONS", {}).get("serializer", RedisSerializer)
    if isinstance(serializer, str):
        serializer = import_string(serializer)
    return serializer().loads(raw)
