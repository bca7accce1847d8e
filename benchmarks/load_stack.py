"""The load benchmark's stack and bookkeeping: the project it builds, gunicorn and the Celery worker it starts, the
CPU they spend, and the database check afterwards (benchmarks/load.py runs it)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from load_client import PASSWORD, Results

# --- building the project (runs in a subprocess, inside the code under test) ---------------------------------------


# One secret for every benchmark and every checkout compared: the cached signed-in user (config.auth) carries a hash
# keyed by it, and the benchmarks share one Redis, so a run with a secret of its own would meet stale entries.
SECRET_KEY = "penumbra-benchmark-secret-key-00000000000000000000000"


def build(*, name: str, n_items: int, n_annotators: int) -> dict[str, object]:
    import django

    django.setup()
    from bench_items import items_create
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from projects.models import Membership, Project
    from projects.services import blind_sample_redraw, membership_set, project_create

    project = project_create(
        name=name, seed=4242, overlap=3, suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE, blind_rate=0.2
    )
    ids = [f"load-{i}" for i in range(n_items)]
    items_create(project=project, external_ids=ids, prompt="Prompt {external_id}: explain **recursion** to a child.")
    blind_sample_redraw(project=project)
    # One hash for everybody: hashing 50 passwords would take longer than the run.
    hashed = make_password(PASSWORD)
    user_model = get_user_model()
    names = [f"load-annotator-{n}" for n in range(n_annotators)]
    for username in [*names, "load-lead"]:
        # Created with the password, never saved again: a save of a user row puts a tombstone in place of its
        # cached copy for a minute (config.auth), which would send every request of the run to the user table.
        user, _ = user_model.objects.get_or_create(username=username, defaults={"password": hashed})
        role = Membership.Role.LEAD if username == "load-lead" else Membership.Role.ANNOTATOR
        membership_set(project=project, user=user, role=role)
    return {"project": project.pk, "annotators": names}


# --- the stack -------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


@dataclass
class Stack:
    app_dir: Path
    env: dict[str, str]
    port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, *args], cwd=self.app_dir, env=self.env, check=True, capture_output=True, text=True
        ).stdout

    def start(self, *, workers: int | None, threads: int | None, logs: Path) -> None:
        bin_dir = Path(sys.executable).parent
        # The deployed settings (config/gunicorn.py: processes, threads, keep-alive, timeouts, backlog) when the code
        # under test has them; worker and thread counts given for the run on top.
        config = ["-c", "config/gunicorn.py"] if (self.app_dir / "config" / "gunicorn.py").exists() else []
        web = [
            str(bin_dir / "gunicorn"),
            *config,
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--worker-class",
            "gthread",
            *(["--workers", str(workers)] if workers else []),
            *(["--threads", str(threads)] if threads else []),
        ]
        worker = [str(bin_dir / "celery"), "-A", "config", "worker", "--concurrency=1", "--loglevel=WARNING"]
        worker += ["-Q", self.env["CELERY_QUEUE"], "--without-gossip", "--without-mingle", "--without-heartbeat"]
        for name, command in (("web", web), ("worker", worker)):
            log = (logs / f"{name}.log").open("wb")
            self.processes.append(
                subprocess.Popen(command, cwd=self.app_dir, env=self.env, stdout=log, stderr=subprocess.STDOUT)
            )
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/accounts/login/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise SystemExit(f"gunicorn did not answer on port {self.port}; see {logs}/web.log")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()


# --- checking the database -----------------------------------------------------------------------------------------


def verify(url: str, project_id: int, results: Results) -> list[str]:
    import psycopg

    problems: list[str] = []
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            """
            SELECT u.username, a.item_id, r.position, v.criterion_id, v.mu, v.nu,
                   (SELECT count(*) FROM annotation_annotationrevision rv WHERE rv.annotation_id = a.id)
            FROM annotation_annotation a
            JOIN auth_user u ON u.id = a.annotator_id
            JOIN annotation_judgmentvalue v ON v.annotation_id = a.id
            JOIN projects_response r ON r.id = v.response_id
            WHERE a.project_id = %s
            """,
            [project_id],
        ).fetchall()
    stored: dict[tuple[str, int], tuple[dict[tuple[int, int], tuple[int, int]], int]] = {}
    for username, item_id, position, criterion_id, mu, nu, revisions in rows:
        entry = stored.setdefault((username, item_id), ({}, revisions))
        entry[0][(position, criterion_id)] = (mu, nu)
    for key, (values, count) in results.acknowledged.items():
        found = stored.get(key)
        if found is None:
            problems.append(f"acknowledged save missing: {key}")
        elif found[0] != values:
            problems.append(f"values differ for {key}: stored {found[0]}, acknowledged {values}")
        elif found[1] != count:
            problems.append(f"{key}: {found[1]} revisions for {count} acknowledged saves")
    extra = set(stored) - set(results.acknowledged)
    problems.extend(f"annotation nobody was told about: {key}" for key in sorted(extra))
    return problems


def backlog(stack: Stack, project_id: int) -> dict[str, int]:
    import redis

    client = redis.Redis.from_url(stack.env["REDIS_URL"])
    queued = int(client.llen(stack.env["CELERY_QUEUE"]))
    dirty = 0
    for key in client.scan_iter(f"penumbra:{stack.env['CELERY_QUEUE']}:dirty-items:*"):
        dirty += int(client.scard(key))
    # Items whose figures are older than their labels, by the reconciliation's own query (-1 if the code under test
    # has no such function under this name).
    stale = stack.run(
        "-c",
        "import django, json; django.setup(); from aggregation import services; "
        "find = getattr(services, 'stale_items_list', None); "
        f"print(json.dumps(-1 if find is None else len(find().get({project_id}, []))))",
    ).strip()
    return {"queued_tasks": queued, "dirty_items": dirty, "stale_items": int(json.loads(stale.splitlines()[-1]))}


# --- CPU spent by the server side ----------------------------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_cpu(pid: int) -> float | None:
    """User + system CPU seconds of one live process (Linux /proc), None if it is gone or unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == pid:
                found.append(int(entry.name))
    return found


def process_tree(pid: int) -> list[int]:
    """A process and its live children (gunicorn's master and workers, Celery's and its pool)."""
    return [pid, *_children(pid)]


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    readings = {pid: _proc_cpu(pid) for pid in pids}
    return {pid: seconds for pid, seconds in readings.items() if seconds is not None}


class CpuTracker:
    """The server's CPU over a run, by part (web, worker, postgres), its processes read every ``interval`` s.

    PostgreSQL backends come and go during a run (DB_CONN_MAX_AGE recycles them, a worker may reconnect): reading
    them only at the start and the end missed every backend that ended in between. Sampled, a process that ends
    loses only what it spent since its last sample, so the figure is still a lower bound, but a close one. A
    process first seen after the start is counted whole (it was started during the run)."""

    def __init__(self, *, web_pid: int, worker_pid: int, database_url: str, interval: float = 0.5) -> None:
        import psycopg

        self.web_pid, self.worker_pid, self.interval = web_pid, worker_pid, interval
        self.database = urlparse(database_url).path.lstrip("/")
        # One connection for the whole run: a new one per sample would add a backend (and its CPU) every time.
        self._connection = psycopg.connect(database_url, autocommit=True)
        self.start: dict[str, dict[int, float]] = {}
        self.last: dict[str, dict[int, float]] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _backends(self) -> list[int]:
        rows = self._connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [self.database]
        ).fetchall()
        return [int(row[0]) for row in rows]

    def _read(self) -> dict[str, dict[int, float]]:
        parts = {
            "web": process_tree(self.web_pid),
            "worker": process_tree(self.worker_pid),
            "postgres": self._backends(),
        }
        return {part: cpu_seconds(pids) for part, pids in parts.items()}

    def _sample(self) -> None:
        for part, readings in self._read().items():
            self.last.setdefault(part, {}).update(readings)
        self.samples += 1

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> CpuTracker:
        self.start = self._read()
        self.last = {part: dict(readings) for part, readings in self.start.items()}
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self._connection.close()

    def spent(self) -> dict[str, float]:
        """CPU seconds by part over the run."""
        return {
            part: sum(seconds - self.start.get(part, {}).get(pid, 0.0) for pid, seconds in readings.items())
            for part, readings in self.last.items()
        }
