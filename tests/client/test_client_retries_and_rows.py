"""The client against a small scripted HTTP server (a thread on 127.0.0.1, real sockets, not a mock) that drops
connections and answers 503 or 429: what it tries again, what it never sends twice, and how long it waits (the waits
are recorded instead of slept). Also: rows and Datasets uploaded as JSON Lines, and the example script under
``mypy --strict``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from penumbra_client import Penumbra, PenumbraError

ROOT = Path(__file__).resolve().parents[2]
DROP = "drop"


class Scripted:
    """A server that answers each request with the next step of its script: DROP (close the connection without
    a word) or (status, headers, body). Every request is recorded as (method, path, body)."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        self.seen: list[tuple[str, str, bytes]] = []
        script, seen = self.script, self.seen

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append((self.command, self.path, body))
                step = script.pop(0) if script else (404, {}, {"detail": "not scripted"})
                if step == DROP:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, headers, payload = step
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [f"{method} {path.split('?')[0]}" for method, path, _ in self.seen]


@pytest.fixture
def server() -> Iterator[Scripted]:
    scripted = Scripted()
    scripted.thread.start()
    yield scripted
    scripted.server.shutdown()
    scripted.server.server_close()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def penumbra(server: Scripted, waits: list[float]) -> Iterator[Penumbra]:
    with Penumbra(server.url, "token", retries=3, backoff_seconds=0.5, max_wait_seconds=60, timeout=5) as client:
        client._sleep = waits.append
        yield client


PROJECT = {"id": 1, "slug": "p", "name": "P", "mode": "binary", "phase": "collecting", "role": "lead"}
JOB = {"id": 9, "kind": "import_items", "status": "queued", "progress_done": 0, "result": {}, "errors": []}


def test_a_read_survives_a_dropped_connection_and_a_503(server, penumbra, waits):
    server.script += [DROP, (503, {"Retry-After": "0"}, {"detail": "busy"}), (200, {}, [PROJECT])]

    projects = penumbra.projects()

    assert [p.slug for p in projects] == ["p"]
    assert server.paths() == ["GET /api/projects/"] * 3
    assert waits[1] == 0  # the server's Retry-After, not the backoff
    assert 0.5 <= waits[0] <= 0.5 * 1.25  # the first backoff, with at most a quarter of jitter


def test_retry_after_is_honoured_up_to_the_cap(server, penumbra, waits):
    server.script += [(429, {"Retry-After": "7"}, {}), (429, {"Retry-After": "600"}, {}), (200, {}, PROJECT)]

    assert penumbra.project(1).id == 1
    assert waits == [7, 60]


def test_backoff_doubles_and_the_last_error_is_raised(server, penumbra, waits):
    server.script += [(500, {}, {"detail": "boom"})] * 4

    with pytest.raises(PenumbraError) as error:
        penumbra.projects()

    assert error.value.status == 500
    assert len(server.seen) == 4  # one try and three retries
    assert [round(w / 0.5 / 2**i) for i, w in enumerate(waits)] == [1, 1, 1]


def test_an_upload_of_rows_is_sent_again_whole_after_a_503(server, penumbra):
    rows = [{"prompt": "p1", "chosen": "a", "rejected": "b"}, {"prompt": "p2", "chosen": "c", "rejected": "d"}]
    server.script += [(503, {}, {}), (202, {}, {"job": 9, "url": "/api/jobs/9/"}), (200, {}, JOB)]

    job = penumbra.import_items(1, rows, wait=False)

    assert job.id == 9
    assert server.paths() == ["POST /api/projects/1/items/import/"] * 2 + ["GET /api/jobs/9/"]
    sent = b'{"prompt": "p1", "chosen": "a", "rejected": "b"}\n{"prompt": "p2", "chosen": "c", "rejected": "d"}\n'
    assert [body.count(sent) for _, _, body in server.seen[:2]] == [1, 1]


def test_an_upload_that_may_have_reached_the_server_is_never_sent_twice(server, penumbra):
    server.script += [DROP, (202, {}, {"job": 9, "url": "/api/jobs/9/"})]

    with pytest.raises(httpx.TransportError):
        penumbra.import_items(1, [{"prompt": "p", "chosen": "a", "rejected": "b"}], wait=False)

    assert server.paths() == ["POST /api/projects/1/items/import/"]


def test_a_request_that_never_left_is_tried_again_even_for_an_upload(waits):
    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with Penumbra(url, "token", retries=2, timeout=2) as penumbra:
        penumbra._sleep = waits.append
        with pytest.raises(httpx.ConnectError):
            penumbra.import_items(1, [{"prompt": "p", "chosen": "a", "rejected": "b"}], wait=False)

    assert len(waits) == 2


def test_the_reading_options_and_a_dataset_are_sent(server, penumbra):
    datasets = pytest.importorskip("datasets", reason="the datasets extra (pip install './client[datasets]')")
    rows = datasets.Dataset.from_list([{"item": "x", "annotator": "ann", "mode": "binary", "choice": 0}])
    server.script += [(202, {}, {"job": 9, "url": "/api/jobs/9/"}), (200, {}, JOB)]

    penumbra.import_labels(1, rows, format="argilla", statuses=["submitted", "unknown"], ratings_rule="binary",
                         scale=(1, 6), wait=False)  # fmt: skip

    body = server.seen[0][2]
    assert b'{"item": "x", "annotator": "ann", "mode": "binary", "choice": 0}\n' in body
    for name, value in [("statuses", b"submitted"), ("statuses", b"unknown"), ("ratings_rule", b"binary"),
                        ("scale", b"1..6"), ("format", b"argilla")]:  # fmt: skip
        assert b'name="' + name.encode() + b'"\r\n\r\n' + value + b"\r\n" in body


def test_an_export_streams_to_disk_after_a_503(server, penumbra, tmp_path):
    lines = b'{"prompt": "p", "chosen": "a", "rejected": "b"}\n'
    server.script += [(503, {"Retry-After": "1"}, {}), (200, {"Content-Type": "application/x-ndjson"}, lines)]

    written = penumbra.export(1, tmp_path / "dpo.jsonl")

    assert written.read_bytes() == lines
    assert server.paths() == ["GET /api/projects/1/export/"] * 2


def test_the_example_script_passes_mypy_strict(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from penumbra_client import Penumbra\n"
        "with Penumbra('http://x', 't') as p:\n"
        "    p.import_labels(1, 'f.json', format='prodigy', ratings_rule='average')\n"
    )
    env = {**os.environ, "MYPYPATH": str(ROOT / "client")}
    command = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "client" / "pyproject.toml"),
               "--cache-dir", str(tmp_path / "cache")]  # fmt: skip

    example = subprocess.run([*command, str(ROOT / "client" / "examples" / "export.py")], env=env,
                             capture_output=True, text=True)  # fmt: skip
    mistakes = subprocess.run([*command, str(wrong)], env=env, capture_output=True, text=True)

    assert example.returncode == 0, example.stdout
    assert mistakes.returncode == 1
    assert "Literal['prodigy']" in mistakes.stdout
    assert "Literal['average']" in mistakes.stdout


def test_export_dataset_is_built_on_disk(server, penumbra, tmp_path):
    pytest.importorskip("datasets", reason="the datasets extra (pip install './client[datasets]')")
    lines = b"".join(
        json.dumps({"prompt": f"p{i}", "chosen": "a", "rejected": "b"}).encode() + b"\n" for i in range(50)
    )
    server.script += [DROP, (200, {"Content-Type": "application/x-ndjson"}, lines)]

    dataset = penumbra.export_dataset(1, format="dpo", cache_dir=tmp_path / "arrow")

    assert dataset.num_rows == 50
    assert dataset["prompt"][:2] == ["p0", "p1"]
    # Memory-mapped Arrow files in the cache, which outlive the downloaded JSON Lines.
    assert dataset.cache_files
    assert all(Path(f["filename"]).is_relative_to(tmp_path / "arrow") for f in dataset.cache_files)
