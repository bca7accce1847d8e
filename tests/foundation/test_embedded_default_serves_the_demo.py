"""The embedded default: no environment at all, SQLite, in-process tasks; the demo is served and its lead sees it.

Runs the real commands in subprocesses so that nothing of the test settings leaks in.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _embedded_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL", "PENUMBRA_"))}
    env["PENUMBRA_DATA_DIR"] = str(data_dir)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    completed = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_demo_is_served_on_sqlite(tmp_path):
    env = _embedded_env(tmp_path)
    _manage(env, "migrate", "--noinput")
    output = _manage(env, "seed_demo")
    assert "40 items imported" in output
    assert "lead " in output
    assert "annotator1" in output
    assert (tmp_path / "penumbra.sqlite3").exists()
    assert "0 items imported, 40 already there" in _manage(env, "seed_demo")

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                page = opener.open(f"{base}/accounts/login/", timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode(
            {"username": "lead", "password": "penumbra-demo", "csrfmiddlewaretoken": token, "next": "/"}
        ).encode()
        request = urllib.request.Request(f"{base}/accounts/login/", data=form, headers={"Referer": f"{base}/"})
        home = opener.open(request, timeout=10).read().decode()
        assert "Demo: long-form QA (PRD)" in home
        static = opener.open(f"{base}/static/vendor/htmx.min.js", timeout=10)
        assert static.status == 200
    finally:
        server.terminate()
        server.wait(timeout=10)
