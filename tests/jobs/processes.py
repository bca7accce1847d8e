"""Real processes for fault tests: a Celery worker (optionally with beat) and a private redis-server.

Each test gets its own queue and the test process's Celery app is pointed at the same broker, so parallel test
runs never take each other's tasks.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 40


def test_database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def new_queue() -> str:
    return f"penumbra-test-{uuid.uuid4().hex[:12]}"


class Worker:
    """A `celery worker` subprocess on one queue; ``beat=True`` embeds the beat scheduler (jobs_recover)."""

    def __init__(self, *, log_path: Path, broker_url: str, queue: str, env: dict[str, str], beat: bool = False) -> None:
        self.log_path = log_path
        self.broker_url = broker_url
        self.queue = queue
        self.env = env
        self.beat = beat
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "REDIS_URL": self.broker_url,
            "CELERY_QUEUE": self.queue,
            "DB_CONN_MAX_AGE": "0",
            **self.env,
        }
        command = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            f"--queues={self.queue}",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=INFO",
        ]
        if self.beat:
            command += ["--beat", f"--schedule={self.log_path.parent / 'beat-schedule'}"]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        """SIGKILL: no cleanup, no acknowledgement, the database connection just drops."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""


class RedisServer:
    """A redis-server of the test's own on a free port, so stopping it disturbs nobody else."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(self._answers, "redis-server to answer", lambda: "")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def wait_for(condition: Callable[[], bool], what: str, log: Callable[[], str], seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not happen within {seconds} s; worker log:\n{log()}")
