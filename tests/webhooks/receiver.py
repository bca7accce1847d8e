"""A webhook receiver on 127.0.0.1 that answers from a script of status codes and records every request."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    url: str = ""
    #: Status codes to answer, in order; the last one repeats.
    script: list[int] = field(default_factory=lambda: [200])
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


def start_receiver(script: list[int]) -> tuple[Receiver, ThreadingHTTPServer]:
    receiver = Receiver(script=list(script))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            status = receiver.script.pop(0) if len(receiver.script) > 1 else receiver.script[0]
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver, server
