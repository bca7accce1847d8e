"""Reading settings from the environment with errors that name the variable.

Kept apart from settings.py so that tests can check the messages without reloading Django.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit


class SettingsError(Exception):
    """A setting is missing or malformed; the message names the variable and what is expected."""


def env_bool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name}={raw!r}: expected one of 1, 0, true, false, yes, no, on, off")


def env_int(name: str, default: int, environ: Mapping[str, str] = os.environ, minimum: int = 0) -> int:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
    if value < minimum:
        raise SettingsError(f"{name}={raw!r}: expected a whole number of at least {minimum}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...], environ: Mapping[str, str] = os.environ) -> str:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise SettingsError(f"{name}={raw!r}: expected one of {', '.join(choices)}")
    return value


def env_list(name: str, default: list[str], environ: Mapping[str, str] = os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def database_url(environ: Mapping[str, str] = os.environ) -> str | None:
    raw = environ.get("DATABASE_URL", "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in {"postgres", "postgresql", "sqlite"}:
        raise SettingsError(f"DATABASE_URL={raw!r}: expected postgres://user:password@host:port/name or sqlite:///path")
    if parts.scheme != "sqlite" and not parts.path.strip("/"):
        raise SettingsError(f"DATABASE_URL={raw!r}: the database name is missing (postgres://…/name)")
    return raw


def redis_url(environ: Mapping[str, str] = os.environ) -> str | None:
    raw = environ.get("REDIS_URL", "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in {"redis", "rediss"} or not parts.hostname:
        raise SettingsError(f"REDIS_URL={raw!r}: expected redis://host:port/db")
    return raw
