"""gunicorn's settings for Penumbra, read by the Dockerfile's and docker-compose's command (``gunicorn -c
config/gunicorn.py config.wsgi``) and by the tests that start the real server. Each one can be overridden from the
environment; command-line flags override this file.

Chosen so that under overload a request waits and is answered, never dropped:

- ``keepalive`` longer than the idle time of whatever reuses connections to gunicorn. A keep-alive connection that
  gunicorn closes as idle while the client (a browser, httpx, the TLS proxy in front: Caddy keeps idle upstream
  connections 2 minutes) is sending its next request on it ends with no response at all: the client cannot tell
  whether a POST was processed. Under overload the race is no longer rare: a request sent on a kept-alive
  connection sits unread while every thread is busy, and gunicorn's 2-second default expired it. Idle keep-alive
  connections cost a file descriptor each, not a thread (gthread polls them).
- ``worker_connections`` (per process) bounds what one process holds, keep-alive included; beyond it gunicorn stops
  accepting and new connections wait in the kernel's ``backlog`` (answered later, not refused).
- ``timeout``: a worker process silent this long is killed with every request it holds, so it is well above the
  slowest request (an export or dashboard on a big project), not the 30 s default.
- ``graceful_timeout``: on a redeploy (SIGTERM) requests in flight get this long to finish.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise SystemExit(f"{name}: expected a whole number, got {value!r}") from None
    if number < 1:
        raise SystemExit(f"{name}: expected at least 1, got {number}")
    return number


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
# gthread: saves wait on PostgreSQL most of the time, so threads overlap them cheaply; about one process per core.
# Chosen by measurement (benchmarks/load.py, 50 annotators in a closed loop on a 2-core machine, two rounds each):
# 1 × 8 gave 56.0 and 47.6 items/s, 2 × 4 61.0 and 69.1, 2 × 8 56.9 and 79.9, 3 × 4 60.1 and 63.5. One process is
# bound by its own interpreter; past one per core, processes only add switching.
worker_class = "gthread"
workers = _int("WEB_CONCURRENCY", 2)
threads = _int("WEB_THREADS", 8)
keepalive = _int("GUNICORN_KEEPALIVE", 130)
worker_connections = _int("GUNICORN_WORKER_CONNECTIONS", 1000)
backlog = _int("GUNICORN_BACKLOG", 2048)
timeout = _int("GUNICORN_TIMEOUT", 120)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")

# The settings read this to keep sessions, users and login counts out of per-process memory when there is no Redis
# (config/settings.py); a deployment that runs several gunicorn masters sets the total itself.
os.environ.setdefault("PENUMBRA_WEB_PROCESSES", str(workers))

# The embedded default (no DATABASE_URL: SQLite, caches in process memory) is one process: a second one would keep
# its own sessions and login counts, so a logout in one would not reach the other. Refuse rather than start so.
if workers > 1 and not os.environ.get("DATABASE_URL", "").strip():
    raise SystemExit(
        f"WEB_CONCURRENCY={workers} without DATABASE_URL: the embedded SQLite mode keeps sessions and login-failure "
        "counts in one process's memory. Set WEB_CONCURRENCY=1, or DATABASE_URL (PostgreSQL) for several processes."
    )
