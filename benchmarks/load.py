"""Many annotators at once, doing exactly what the page does, against the production stack on loopback.

Starts gunicorn (gthread), a Celery worker and nothing else on free 127.0.0.1 ports against PostgreSQL and Redis,
builds a project per run, and lets N simulated annotators work for a fixed time: log in (CSRF), open the page,
then the single-request htmx flow (one POST saves and returns the next item's fragment), now and then a skip with a
reason, a step back to the previous item to edit it, or a reload of the current one. A separate lead client polls
``/api/projects/{id}/stats/`` to measure freshness: save acknowledged → counted in ``progress.labels_total``.
Afterwards the database is checked: every acknowledged save present exactly once (one revision per acknowledged
save) with the values last acknowledged, and no annotation nobody was told was saved.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_load python benchmarks/load.py
    options: --mode closed|paced|both|overload  --annotators 1 10 50  --seconds 30  --rate 40  --items 1000
             --workers W --threads T (default: config/gunicorn.py's)  --app-dir DIR (another checkout's code)
             --keepalive S (override config/gunicorn.py's keep-alive, e.g. 2, gunicorn's default, to compare)

``--mode overload`` measures the capacity (closed loop with the largest N), then offers twice that many items/s
from twice as many annotators and counts the requests that ended without a response (the connection closed or
reset, or no answer within the client's 60 s): the number that must be 0.

The client is a thread per annotator on httpx rather than locust: no new dependency, and the script must know
exactly which saves were acknowledged (the client token and the values of every 200) to check the database, which
is simplest in plain code. Threads spend their time waiting on sockets; parsing a fragment is a few regexes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

# The sibling modules, whether run as a script (its folder is on the path) or imported.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_client import Annotator, Lead, Results, freshness, pct
from load_stack import (
    SECRET_KEY,
    CpuTracker,
    Stack,
    backlog,
    build,
    ensure_database,
    free_port,
    verify,
)

ROOT = Path(__file__).resolve().parent.parent
# httpx's exception names for a request that got no response (load_client records them by name).
NO_RESPONSE = ("RemoteProtocolError", "ReadError", "WriteError", "ConnectError", "Timeout", "CloseError")


# --- one run -------------------------------------------------------------------------------------------------------


def run_once(
    stack: Stack, *, n: int, seconds: float, items: int, rate: float | None, label: str, poll: bool = True
) -> dict[str, object]:
    """One run; ``poll=False`` leaves the lead's stats polling out, so the server's CPU is the annotators' alone."""
    built = json.loads(
        stack.run(
            str(Path(__file__).resolve()),
            "_build",
            "--name",
            f"{label} {uuid.uuid4().hex[:6]}",
            "--items",
            str(items),
            "--annotators",
            str(n),
        ).splitlines()[-1]
    )
    project_id = int(built["project"])
    results = Results()
    until = [float("inf")]
    barrier = threading.Barrier(n + 1)
    interval = n / rate if rate else 0.0
    annotators = [
        Annotator(
            base=stack.base,
            project_id=project_id,
            username=name,
            results=results,
            start=barrier,
            until=until,
            interval=interval,
            seed=index,
        )
        for index, name in enumerate(built["annotators"])
    ]
    for annotator in annotators:
        annotator.start()
    barrier.wait()
    stop = threading.Event()
    lead = Lead(base=stack.base, project_id=project_id, stop=stop)
    tracker = CpuTracker(
        web_pid=stack.processes[0].pid, worker_pid=stack.processes[1].pid, database_url=stack.env["DATABASE_URL"]
    )
    with tracker:
        started = time.monotonic()
        until[0] = started + seconds
        if poll:
            lead.start()
        for annotator in annotators:
            annotator.join(timeout=seconds + 120)
        elapsed = time.monotonic() - started
    cpu = tracker.spent()
    cpu_samples = tracker.samples
    # Freshness needs the last saves to become visible: keep polling a while after the annotators stop.
    time.sleep(5)
    after = backlog(stack, project_id)
    deadline = time.monotonic() + 30
    while poll and time.monotonic() < deadline and lead.seen and lead.seen[-1][1] < len(results.first_saves):
        time.sleep(0.5)
    stop.set()
    if poll:
        lead.join(timeout=10)
    lags = freshness(results.first_saves, lead.seen)
    problems = verify(stack.env["DATABASE_URL"], project_id, results)
    return {
        "label": label,
        "annotators": n,
        # Paced: the rate asked for, and the rate of requests the annotators actually set out to send.
        "offered": f"{rate:g} req/s asked, {results.steps / elapsed:.1f} sent" if rate else "closed loop",
        "seconds": round(elapsed, 1),
        "saves": results.saves,
        "other_requests": len(results.other_ms),
        # Server CPU over the run (the lead's stats polls included), per acknowledged save, and all parts together.
        "cpu_ms_per_save": {
            **{part: round(1000 * spent / max(results.saves, 1), 1) for part, spent in sorted(cpu.items())},
            "total": round(1000 * sum(cpu.values()) / max(results.saves, 1), 1),
        },
        "cpu_samples": cpu_samples,
        "items_per_s": round(results.saves / elapsed, 1),
        "save_ms": _percentiles(results.save_ms),
        "other_ms": _percentiles(results.other_ms),
        "errors": len(results.errors),
        # Requests that got no HTTP response at all: the connection closed, reset or refused, or a timeout.
        "no_response": sum(any(kind in error for kind in NO_RESPONSE) for error in results.errors),
        "error_sample": results.errors[:3],
        "queue_empty": results.queue_empty,
        "freshness_s": [round(pct(lags, q), 2) for q in (0.5, 0.95)] + [round(max(lags), 2) if lags else None],
        "fresh_measured": f"{len(lags)}/{len(results.first_saves)}",
        "backlog_5s_after": after,
        "database_check": "ok" if not problems else [*problems[:5], f"{len(problems)} problems"],
    }


def _percentiles(values: list[float]) -> list[int | None]:
    """p50, p95 and p99 in whole milliseconds; None for each when there was nothing (a short run may skip nothing)."""
    return [round(pct(values, q)) if values else None for q in (0.5, 0.95, 0.99)]


def _print(result: dict[str, object]) -> None:
    save, other, fresh = result["save_ms"], result["other_ms"], result["freshness_s"]
    print(
        f"{result['label']:>12} N={result['annotators']:<3} {result['offered']:>12}: "
        f"{result['items_per_s']:6.1f} items/s ({result['saves']} saves, {result['other_requests']} other requests "
        f"in {result['seconds']} s) | save p50/p95/p99 {save[0]}/{save[1]}/{save[2]} ms | "
        f"skip, back, reload {other[0]}/{other[1]}/{other[2]} ms | "
        f"errors {result['errors']} (no response {result['no_response']}) | "
        f"freshness p50/p95/max {fresh[0]}/{fresh[1]}/{fresh[2]} s "
        f"({result['fresh_measured']}) | backlog +5 s {result['backlog_5s_after']} | db {result['database_check']} | "
        f"server CPU ms/save {result['cpu_ms_per_save']} (processes read {result['cpu_samples']} times)",
        flush=True,
    )
    if result["error_sample"]:
        print(f"{'':>14}first errors: {result['error_sample']}", flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_build":
        parser = argparse.ArgumentParser()
        parser.add_argument("_build")
        parser.add_argument("--name")
        parser.add_argument("--items", type=int)
        parser.add_argument("--annotators", type=int)
        args = parser.parse_args()
        sys.path.insert(0, os.getcwd())
        print(json.dumps(build(name=args.name, n_items=args.items, n_annotators=args.annotators)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["closed", "paced", "both", "overload"], default="both")
    parser.add_argument("--keepalive", type=int, help="gunicorn keep-alive seconds (default: config/gunicorn.py)")
    parser.add_argument("--annotators", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rate", type=float, default=40, help="items/s offered in total in paced mode")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--workers", type=int, help="gunicorn processes (default: config/gunicorn.py's)")
    parser.add_argument("--threads", type=int, help="threads per gunicorn process (default: config/gunicorn.py's)")
    parser.add_argument("--app-dir", type=Path, default=ROOT)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--cpu-seconds",
        type=float,
        default=15,
        help="length of the N=1 run without polling that measures CPU (0: none)",
    )
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("Set DATABASE_URL to a PostgreSQL database for the benchmark (it is created if missing).")
    if urlparse(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("The load benchmark runs on loopback only.")
    ensure_database(url)
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"penumbra-load-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(args.app_dir.resolve()),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/1"),
        "CELERY_QUEUE": f"load-{os.getpid()}",
        "SECRET_KEY": os.environ.get("SECRET_KEY", SECRET_KEY),
        "DEBUG": "0",
        # Plain HTTP on loopback: production settings would otherwise redirect every request to https and mark the
        # cookies secure, which an http client never sends back.
        "PENUMBRA_HTTPS": "0",
        "PENUMBRA_DATA_DIR": str(logs),
        "LOG_LEVEL": "WARNING",
        "GUNICORN_ACCESS_LOG": os.environ.get("GUNICORN_ACCESS_LOG", "/dev/null"),
    }
    if args.keepalive:
        env["GUNICORN_KEEPALIVE"] = str(args.keepalive)
    stack = Stack(app_dir=args.app_dir.resolve(), env=env, port=free_port())
    stack.run("manage.py", "migrate", "--noinput")
    shape = f"{args.workers or 'default'} worker(s) × {args.threads or 'default'} threads"
    print(
        f"gunicorn gthread {shape} (config/gunicorn.py unless given), one Celery worker, default settings, "
        f"{args.items} items per run, code from {stack.app_dir}; logs in {logs}",
        flush=True,
    )
    stack.start(workers=args.workers, threads=args.threads, logs=logs)
    results = []
    try:
        if args.cpu_seconds:
            # One annotator and no stats polling: the server's CPU per save is the save path's alone.
            cpu_run = run_once(
                stack, n=1, seconds=args.cpu_seconds, items=args.items, rate=None, label="cpu", poll=False
            )
            results.append(cpu_run)
            print(
                f"server CPU per save at N=1, no polling ({cpu_run['saves']} saves, {cpu_run['other_requests']} other "
                f"requests): {cpu_run['cpu_ms_per_save']} ms (target: total ≤ 15 ms); "
                f"save p50/p95 {cpu_run['save_ms'][0]}/{cpu_run['save_ms'][1]} ms (target p95 ≤ 40 ms)",
                flush=True,
            )
        if args.mode in ("closed", "both"):
            for n in args.annotators:
                results.append(run_once(stack, n=n, seconds=args.seconds, items=args.items, rate=None, label="closed"))
                _print(results[-1])
        if args.mode == "overload":
            n = max(args.annotators)
            capacity = run_once(stack, n=n, seconds=args.seconds, items=args.items, rate=None, label="capacity")
            results.append(capacity)
            _print(capacity)
            offered = 2 * float(capacity["items_per_s"])
            results.append(
                run_once(stack, n=2 * n, seconds=args.seconds, items=args.items, rate=offered, label="overload")
            )
            _print(results[-1])
            print(
                f"overload: {offered:g} items/s offered (2 × capacity {capacity['items_per_s']}) by {2 * n} "
                f"annotators: {results[-1]['no_response']} requests without a response (target 0), "
                f"{results[-1]['errors']} errors, save p99 {results[-1]['save_ms'][2]} ms",
                flush=True,
            )
        if args.mode in ("paced", "both"):
            n = max(args.annotators)
            results.append(run_once(stack, n=n, seconds=args.seconds, items=args.items, rate=args.rate, label="paced"))
            _print(results[-1])
    finally:
        stack.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    summary = [r for r in results if r["label"] == "closed" and r["annotators"] == 50]
    if summary:
        print(f"closed loop N=50: {summary[0]['items_per_s']} items/s (target ≥ 85)")
    paced = [r for r in results if r["label"] == "paced"]
    if paced:
        p = paced[0]
        print(
            f"paced ({p['offered']}): {p['items_per_s']} items/s, save p95 {p['save_ms'][1]} ms (target ≤ 200), "
            f"freshness p95 {p['freshness_s'][1]} s (target ≤ 2), backlog 5 s after {p['backlog_5s_after']} "
            "(target none)"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    if sys.argv[1:2] == ["_build"]:
        main()  # a step of a run, its answer on the last line of its output
    else:
        with load_reported():
            main()
