"""Real processes for the tests that need them: a Celery worker (optionally with beat), a private redis-server,
and the waiting and stopping around them. One place, used by the worker and fault tests and the live server.

Each worker listens on a queue of its own and the test process's Celery app is pointed at the same broker and
queue (tests.aggregation.conftest.celery_configured), so parallel test runs never take each other's tasks.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from tests.services_plugin import CI

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WAIT_SECONDS = 40
# How the Makefile's `worker` target starts one, minus what each test sets (queue, pool size).
WORKER_ARGUMENTS = (
    "-A",
    "config",
    "worker",
    "--pool=solo",
    "--without-gossip",
    "--without-mingle",
    "--without-heartbeat",
    "--loglevel=INFO",
)


def worker_database_url() -> str:
    """The test database (not the one in DATABASE_URL) as a URL another process can use."""
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def shared_redis_url() -> str:
    """The Redis the services plugin found, for tests that need a broker but not a private one."""
    return os.environ["PENUMBRA_TEST_REDIS_URL"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def new_queue(prefix: str = "penumbra-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def start_process(command: Sequence[str], *, env: Mapping[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as log:
        return subprocess.Popen(list(command), cwd=ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 15 s."""
    stop_processes([process])


def stop_processes(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to all at once (their graceful shutdowns overlap), then SIGKILL to any still running after 15 s."""
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + 15
    for process in processes:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


class Worker:
    """A `celery worker` subprocess on the test database and one queue.

    ``env`` is added to ``base_env`` (the test process's environment unless given); ``beat=True`` embeds the beat
    scheduler (jobs_recover); ``arguments`` replaces WORKER_ARGUMENTS (a test of the deployed command line).
    """

    def __init__(
        self,
        *,
        log_path: Path,
        broker_url: str,
        queue: str,
        env: Mapping[str, str] | None = None,
        beat: bool = False,
        base_env: Mapping[str, str] | None = None,
        arguments: Sequence[str] = WORKER_ARGUMENTS,
    ) -> None:
        self.log_path = log_path
        self.broker_url = broker_url
        self.queue = queue
        self.env = dict(env or {})
        self.beat = beat
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.arguments = list(arguments)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **self.base_env,
            "DATABASE_URL": worker_database_url(),
            "REDIS_URL": self.broker_url,
            "CELERY_QUEUE": self.queue,
            **self.env,
        }
        command = [str(BIN / "celery"), *self.arguments, "--concurrency=1", f"--queues={self.queue}"]
        if self.beat:
            command += ["--beat", f"--schedule={self.log_path.parent / 'beat-schedule'}"]
        self.process = start_process(command, env=env, log_path=self.log_path)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no cleanup, no acknowledgement, the database connection just drops."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""


def purge_queue(queue: str) -> None:
    """Leave nothing queued for a later session (the test process's Celery app must point at the broker)."""
    from config.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)


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
            missing = pytest.fail if CI else pytest.skip
            missing("redis-server is not installed (apt-get install redis-server)")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder)]
        self.process = start_process(command, env=os.environ, log_path=self.folder / "redis.log")
        wait_for(self._answers, "redis-server to answer", lambda: "", seconds=10)

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


def wait_for(
    condition: Callable[[], bool],
    what: str,
    log: Callable[[], str],
    seconds: float = WAIT_SECONDS,
    poll: float = 0.2,
) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` with the end of ``log`` if it never does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(poll)
    pytest.fail(f"{what} did not happen within {seconds} s; log:\n{log()}")


class PgBouncer:
    """Debian's pgbouncer in transaction mode on a free loopback port, in front of the test database's server: every
    transaction may run on a different server connection, as behind a production pooler.

    It refuses to run as root, so as root it drops to the ``postgres`` user, which must read its files: they live in
    a folder of their own that others may read (pytest's tmp_path is private to root)."""

    def __init__(self, *, pool_size: int = 10) -> None:
        self.pool_size = pool_size
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="penumbra-pgbouncer-"))
        self.process: subprocess.Popen[bytes] | None = None

    def url_for(self, database_url: str) -> str:
        parts = urlsplit(database_url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{self.port}"))

    def _config(self) -> Path:
        db = settings.DATABASES["default"]
        server = f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432}"
        (self.folder / "users.txt").write_text(f'"{db["USER"]}" "{db.get("PASSWORD") or ""}"\n')
        config = self.folder / "pgbouncer.ini"
        config.write_text(
            f"[databases]\n* = {server}\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {self.port}\n"
            f"unix_socket_dir =\nauth_type = trust\nauth_file = {self.folder / 'users.txt'}\n"
            f"pool_mode = transaction\ndefault_pool_size = {self.pool_size}\nmax_client_conn = 500\n"
            f"ignore_startup_parameters = extra_float_digits\nadmin_users = {db['USER']}\n"
        )
        self.folder.chmod(0o755)
        for path in self.folder.iterdir():
            path.chmod(0o644)
        return config

    def start(self) -> None:
        binary = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")
        if binary is None:
            missing = pytest.fail if CI else pytest.skip
            missing("pgbouncer is not installed (apt-get install pgbouncer)")
        command = [binary, *(["-u", "postgres"] if os.geteuid() == 0 else []), str(self._config())]
        self.process = start_process(command, env=os.environ, log_path=self.folder / "pgbouncer.log")
        wait_for(self._answers, "pgbouncer to answer", self.log, seconds=10)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def transactions(self) -> int:
        """Transactions PgBouncer has passed to the server, over all its databases (its admin console's SHOW STATS;
        psql, since the console speaks only the simple query protocol)."""
        user = settings.DATABASES["default"]["USER"]
        answer = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", user, "-AtF", ",", "-c", "SHOW STATS", "pgbouncer"],
            capture_output=True,
            text=True,
            check=True,
        )
        return sum(int(line.split(",")[1]) for line in answer.stdout.splitlines() if line)

    def log(self) -> str:
        path = self.folder / "pgbouncer.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None
        shutil.rmtree(self.folder, ignore_errors=True)
