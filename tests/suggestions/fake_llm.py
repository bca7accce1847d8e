"""A small OpenAI-compatible chat server on loopback with scripted answers, for tests of the real client.

Each item's prompt carries a marker; ``script(marker, [step, ...])`` decides what the server answers to the
requests whose message contains that marker, in order (the last step repeats). A step is one of:
``answer(content)`` (a chat completion with that assistant text), ``status(code)`` (an HTTP error) and
``slow(seconds, content)`` (an answer after a delay).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Step:
    content: str | None = None
    status: int = 200
    delay: float = 0.0


def answer(content: str | dict[str, Any]) -> Step:
    return Step(content=content if isinstance(content, str) else json.dumps(content))


def status(code: int) -> Step:
    return Step(status=code)


def slow(seconds: float, content: str | dict[str, Any]) -> Step:
    return Step(content=content if isinstance(content, str) else json.dumps(content), delay=seconds)


def good(preferred: int | str, ifs: list[tuple[float, float]], rationale: str = "Clearer and correct.") -> Step:
    return answer({"preferred": preferred, "rationale": rationale, "ifs": [{"mu": m, "nu": n} for m, n in ifs]})


@dataclass
class FakeLLM:
    scripts: dict[str, list[Step]] = field(default_factory=dict)
    default: Step = field(default_factory=lambda: good(1, [(0.8, 0.1), (0.2, 0.6)]))
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""

    def script(self, marker: str, steps: list[Step]) -> None:
        self.scripts[marker] = list(steps)

    def next_step(self, text: str) -> Step:
        with self.lock:
            for marker, steps in self.scripts.items():
                if marker in text:
                    return steps.pop(0) if len(steps) > 1 else steps[0]
        return self.default

    def calls_for(self, marker: str) -> int:
        return sum(marker in r["text"] for r in self.requests)


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            text = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
            with fake.lock:
                fake.requests.append(
                    {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body, "text": text}
                )
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
            try:
                step = fake.next_step(text)
                if step.delay:
                    time.sleep(step.delay)
                if step.status != 200:
                    payload = json.dumps({"error": {"message": "scripted failure"}}).encode()
                    self.send_response(step.status)
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion",
                            "model": body.get("model"),
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": step.content}}],
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout): exactly what the slow steps are for.
                pass
            finally:
                with fake.lock:
                    fake.in_flight -= 1

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


def start_fake_llm() -> tuple[FakeLLM, _Server]:
    fake = FakeLLM()
    server = _Server(("127.0.0.1", 0), _handler(fake))
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake, server
