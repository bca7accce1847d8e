"""A real Celery worker, started as docker-compose.yml starts it, outlives a Redis outage: it reconnects when the
broker is back and runs the next task. Redis here is a private redis-server on a free port, so stopping it
disturbs nobody else."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from aggregation import tasks
from aggregation.models import ItemAggregate
from tests.aggregation.conftest import annotate_ifs, celery_configured, project_make

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]
QUEUE = f"penumbra-outage-{uuid.uuid4().hex[:12]}"
WAIT_SECONDS = 45
OUTAGE_SECONDS = 5


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    def __init__(self, port: int, log_path: Path) -> None:
        self.port, self.log_path = port, log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def _worker_command() -> list[str]:
    """The worker's command from docker-compose.yml, on one process and this test's queue."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = [arg for arg in compose["services"]["worker"]["command"] if not arg.startswith("--concurrency")]
    assert command[0] == "celery"
    return [str(Path(sys.executable).parent / "celery"), *command[1:], "--concurrency=1", f"--queues={QUEUE}"]


def _database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def outage_setup(transactional_db, tmp_path) -> Iterator[tuple[PrivateRedis, subprocess.Popen[bytes], Path]]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server (apt-get install redis-server)")
    redis = PrivateRedis(_free_port(), tmp_path / "redis.log")
    redis.start()
    broker = f"redis://127.0.0.1:{redis.port}/0"
    log_path = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": broker,
        "CELERY_QUEUE": QUEUE,
        "DB_CONN_MAX_AGE": "0",
    }
    with log_path.open("ab") as log:
        worker = subprocess.Popen(_worker_command(), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with celery_configured(broker_url=broker, task_always_eager=False, task_default_queue=QUEUE):
            yield redis, worker, log_path
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        redis.stop()


def _wait_for(condition: Callable[[], bool], log_path: Path, what: str, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    pytest.fail(f"{what} did not happen within {WAIT_SECONDS} s; worker log:\n{log_path.read_text()[-4000:]}")


def _send_until_done(item, log_path: Path, what: str) -> None:
    # Right after the outage the test process's own pooled connection may be the stale one: send again until
    # the worker answers, as reconciliation would.
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            tasks.item_aggregates.delay(item.project_id, [item.pk])
        except Exception:  # the sender's reconnect, not the worker's, is not under test
            time.sleep(0.5)
            continue
        try:
            _wait_for(lambda: ItemAggregate.objects.filter(item=item).exists(), log_path, what, seconds=10)
            return
        except pytest.fail.Exception:
            continue
    pytest.fail(f"{what}: the worker never ran the task; log:\n{log_path.read_text()[-4000:]}")


def test_the_worker_runs_tasks_after_redis_comes_back(outage_setup):
    redis, worker, log_path = outage_setup
    _, items, annotators = project_make(n_items=2, n_annotators=1)
    for item in items:
        annotate_ifs(item, annotators[0], [(800, 100), (100, 800)])

    _send_until_done(items[0], log_path, "the task before the outage")

    redis.stop()
    time.sleep(OUTAGE_SECONDS)
    assert worker.poll() is None, f"the worker exited while Redis was down:\n{log_path.read_text()[-4000:]}"
    redis.start()

    _send_until_done(items[1], log_path, "the task after the outage")
    assert worker.poll() is None
    log = log_path.read_text()
    assert "Connection to broker lost" in log or "Cannot connect to" in log, "the outage must have been noticed"
    assert "Unrecoverable error" not in log
