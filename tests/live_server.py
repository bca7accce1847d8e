"""A real Penumbra for tests that talk HTTP: gunicorn on a free port of 127.0.0.1 and a Celery worker on Redis, both
on the test database, sharing one data directory (uploads and exports). One per test module (see ``penumbra_server``).

The test process creates users and tokens through the ORM (committed at once); everything else goes through HTTP.
When the module is done both processes stop and the database is flushed, so later tests start from empty tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.processes import (
    BIN,
    ROOT,
    Worker,
    free_port,
    new_queue,
    shared_redis_url,
    start_process,
    stop_process,
    worker_database_url,
)

START_SECONDS = 60


@dataclass
class LiveServer:
    url: str
    data_dir: Path
    env: dict[str, str]
    log_dir: Path

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.log_dir.glob("*.log"))
        )

    def manage(self, *args: str) -> str:
        """``manage.py`` as a person would run it against this server's database."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def _wait_until_up(url: str, server: subprocess.Popen[bytes], live: LiveServer) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited:\n{live.logs()}")
        try:
            with urllib.request.urlopen(f"{url}/accounts/login/", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"the server did not answer within {START_SECONDS} s:\n{live.logs()}")


@pytest.fixture(scope="module")
def penumbra_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("live")
    queue = new_queue("penumbra-live")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PENUMBRA_")},
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": shared_redis_url(),
        "CELERY_QUEUE": queue,
        "PENUMBRA_DATA_DIR": str(folder / "data"),
        "SECRET_KEY": "live-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "AGGREGATION_PROJECT_DELAY": "0",
        "DB_CONN_MAX_AGE": "0",
        "DEBUG": "0",
        # A plain-HTTP server on loopback: with DEBUG off it would otherwise redirect every request to HTTPS.
        "PENUMBRA_HTTPS": "0",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    port = free_port()
    live = LiveServer(url=f"http://127.0.0.1:{port}", data_dir=folder / "data", env=env, log_dir=folder)
    worker = Worker(log_path=folder / "worker.log", broker_url=env["REDIS_URL"], queue=queue, base_env=env)
    worker.start()
    server = start_process(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        env=env,
        log_path=folder / "server.log",
    )
    try:
        _wait_until_up(live.url, server, live)
        yield live
    finally:
        stop_process(server)
        worker.stop()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)
