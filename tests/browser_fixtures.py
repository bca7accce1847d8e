"""Headless Chromium (Debian's, never a downloaded one) driven by Playwright against pytest-django's live_server.

One session-wide browser for every test package (a second sync Playwright in the same process would fail).

Screenshots of each step go to test-artifacts/browser/ (git-ignored), kept as CI artifacts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import PASSWORD
from tests.services_plugin import chromium_path

# Playwright's sync API runs an event loop in this thread; the test body still talks to the database directly.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "browser"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        pytest.skip("needs Chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, request) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(10_000)
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture
def shot(request):
    """shot(page, "step-name") saves test-artifacts/browser/<test>/<nn>-<step>.png."""
    folder = ARTIFACTS / re.sub(r"[^\w.-]+", "_", request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    counter = {"n": 0}

    def take(page, name: str) -> Path:
        counter["n"] += 1
        path = folder / f"{counter['n']:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def login(live_server):
    def log_in(page, username: str) -> None:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return log_in
