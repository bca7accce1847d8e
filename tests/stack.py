"""A whole Penumbra stack: gunicorn processes (by default with the deployed config, config/gunicorn.py) and Celery
workers (one may embed beat), all on the test database and a Redis the caller chooses, plus a TCP proxy that can cut
the web processes off from PostgreSQL.

The fault tests own a stack for one test, often on a private redis-server they stop; tests.live_server keeps one per
test module on the shared Redis.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from tests.processes import BIN, Worker, free_port, new_queue, start_process, stop_processes
from tests.processes import worker_database_url as test_database_url

START_SECONDS = 60
# How the Dockerfile and docker-compose start the web processes (the bind address is added per process).
DEPLOYED_GUNICORN = ("-c", "config/gunicorn.py", "config.wsgi")


@dataclass
class Stack:
    urls: list[str]
    env: dict[str, str]
    folder: Path
    workers: list[Worker]
    servers: list[Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.urls[0]

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.folder.glob("*.log"))
        )


def _wait_until_up(url: str, server: Popen[bytes], stack: Stack) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"gunicorn exited:\n{stack.logs()}")
        try:
            with urllib.request.urlopen(f"{url}/accounts/login/", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"gunicorn did not answer within {START_SECONDS} s:\n{stack.logs()}")


@contextlib.contextmanager
def penumbra_stack(
    folder: Path,
    *,
    redis_url: str,
    web_processes: int = 1,
    workers: int = 1,
    beat: bool = False,
    database_url: str | None = None,
    worker_database_url: str | None = None,
    env: Mapping[str, str] | None = None,
    gunicorn: Sequence[str] = DEPLOYED_GUNICORN,
) -> Iterator[Stack]:
    """``web_processes`` gunicorn masters started with the arguments ``gunicorn`` (by default the config's workers
    and threads) and ``workers`` Celery workers, the first embedding beat when ``beat``. ``database_url`` (e.g.
    through a TcpProxy) is the web processes' only; the workers use the test database directly unless
    ``worker_database_url`` (e.g. through PgBouncer) is given."""
    queue = new_queue("penumbra-stack")
    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PENUMBRA_")},
        "DATABASE_URL": test_database_url(),
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": queue,
        "PENUMBRA_DATA_DIR": str(folder / "data"),
        "SECRET_KEY": "stack-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "AGGREGATION_PROJECT_DELAY": "0",
        "DEBUG": "0",
        # A plain-HTTP server on loopback: with DEBUG off it would otherwise redirect every request to HTTPS.
        "PENUMBRA_HTTPS": "0",
        "WEB_CONCURRENCY": "1",
        **(env or {}),
    }
    base.pop("DJANGO_SETTINGS_MODULE", None)
    stack = Stack(urls=[], env=base, folder=folder, workers=[])
    for index in range(workers):
        worker = Worker(
            log_path=folder / f"worker-{index}.log",
            broker_url=redis_url,
            queue=queue,
            base_env=base,
            beat=beat and index == 0,
            env={"DATABASE_URL": worker_database_url} if worker_database_url else None,
        )
        stack.workers.append(worker)
        worker.start()
    web_env = {**base, "DATABASE_URL": database_url or base["DATABASE_URL"]}
    try:
        for index in range(web_processes):
            port = free_port()
            server = start_process(
                [str(BIN / "gunicorn"), *gunicorn, "--bind", f"127.0.0.1:{port}"],
                env=web_env,
                log_path=folder / f"web-{index}.log",
            )
            stack.servers.append(server)
            stack.urls.append(f"http://127.0.0.1:{port}")
        for url, server in zip(stack.urls, stack.servers, strict=True):
            _wait_until_up(url, server, stack)
        yield stack
    finally:
        stop_processes([*stack.servers, *(worker.process for worker in stack.workers if worker.process is not None)])
        for worker in stack.workers:
            worker.stop()  # already exited: this only forgets the process


def log_in(client: httpx.Client, username: str) -> httpx.Response:
    """Signs ``username`` (a factory user: tests.factories.PASSWORD) in through the login form, as a browser would."""
    from tests.factories import PASSWORD

    page = client.get("/accounts/login/")
    assert page.status_code == 200, page.text[:300]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    form = {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}
    return client.post("/accounts/login/", data=form)


class TcpProxy:
    """Forwards a loopback port to a server; ``cut()`` closes every connection and refuses new ones (the server
    is "gone"), ``restore()`` lets connections through again. A few lines of sockets: no tool to install."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url_for(self, database_url: str) -> str:
        parts = urlsplit(database_url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{self.port}"))

    def _accept(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                client.close()  # refused, as a stopped server would be (after the handshake)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            with self._lock:
                self._sockets.difference_update((source, sink))

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            sockets = list(self._sockets)
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._stopping = True
        self.cut()
        self._listener.close()
