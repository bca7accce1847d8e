"""Finds the services the suite can use before Django reads its settings.

Loaded with ``-p tests.services_plugin`` so it runs before pytest-django configures Django:
- PostgreSQL: DATABASE_URL if set, else postgres on 127.0.0.1:5432 if it answers; otherwise the suite runs on
  SQLite and tests marked ``postgres`` skip, naming it.
- Redis: REDIS_URL if set, else 127.0.0.1:6379 if it answers. It is handed to the tests that start a real Celery
  worker as PENUMBRA_TEST_REDIS_URL; every other test runs tasks in-process, so REDIS_URL is removed here.
- Chromium: /usr/bin/chromium (or PENUMBRA_CHROMIUM) and the playwright package, for tests marked ``browser``.
Under CI=true a missing service ends the run instead of skipping.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
from urllib.parse import urlsplit

import pytest

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/penumbra"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}

MISSING: dict[str, str] = {}


def _answers(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=1):
            return True
    except OSError:
        return False


def _find_postgres() -> None:
    url = os.environ.get("DATABASE_URL", "").strip()
    if url.startswith("sqlite"):
        MISSING["postgres"] = "PostgreSQL: DATABASE_URL points at SQLite"
        return
    candidate = url or DEFAULT_DATABASE_URL
    if _answers(candidate, 5432):
        os.environ["DATABASE_URL"] = candidate
    else:
        os.environ.pop("DATABASE_URL", None)
        MISSING["postgres"] = f"PostgreSQL does not answer at {urlsplit(candidate).netloc or candidate}"


def _find_redis() -> None:
    candidate = os.environ.pop("REDIS_URL", "").strip() or DEFAULT_REDIS_URL
    if _answers(candidate, 6379):
        os.environ["PENUMBRA_TEST_REDIS_URL"] = candidate
    else:
        MISSING["redis"] = f"Redis does not answer at {urlsplit(candidate).netloc}"


def chromium_path() -> str | None:
    configured = os.environ.get("PENUMBRA_CHROMIUM")
    if configured:
        return configured if os.path.exists(configured) else None
    return shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _find_browser() -> None:
    if chromium_path() is None:
        MISSING["browser"] = "Chromium is not installed (apt-get install chromium)"
    elif importlib.util.find_spec("playwright") is None:
        MISSING["browser"] = "the playwright package is not installed"


# The test client and the live server speak plain HTTP; production's HTTPS redirect and secure cookies stay off.
os.environ.setdefault("PENUMBRA_HTTPS", "0")
# The fake LLM server listens on 127.0.0.1; the tests of the URL rule switch this off where they need to.
os.environ.setdefault("LLM_ALLOW_PRIVATE_URLS", "1")
# Every compiled hot query is compared with the ORM's SQL, here and in the live servers the tests start.
os.environ.setdefault("PENUMBRA_CHECK_COMPILED_SQL", "1")
_find_postgres()
_find_redis()
_find_browser()


def pytest_configure(config: pytest.Config) -> None:
    if CI and MISSING:
        pytest.exit("CI=true and services are missing: " + "; ".join(MISSING.values()), returncode=3)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, reason in MISSING.items():
        if item.get_closest_marker(marker) is not None:
            pytest.skip(f"service missing: {reason}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    database = "PostgreSQL" if "postgres" not in MISSING else "SQLite"
    lines = [f"penumbra: database {database}"]
    lines += [f"penumbra: skipping tests that need {name}: {reason}" for name, reason in MISSING.items()]
    return lines
