"""Annotation page cost at 100 vs 100,000 items: queries of the next-item page, and server time of next-item and save.

Builds two projects (bulk_create: items, two responses each, a suggestion per item, blind_sample display) on a
dedicated PostgreSQL database, then drives the real views in-process through Django's test Client: many annotators
each ask for the next item and save it, repeatedly. Times are server time (view, middleware, templates, database;
no network). Optionally (--concurrent) 50 threads hit a live server on loopback and report saves/s and p95.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_ann python benchmarks/annotate.py
    options: --sizes 100 100000  --rounds 200  --annotators 20  --keep
             --concurrent [--threads 50 --seconds 30 --server gunicorn|dev --workers 3]

The database is created and migrated when missing. Without DATABASE_URL the script refuses: SQLite figures say
nothing about production.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Plain HTTP on loopback: the production settings would redirect every request to https.
os.environ.setdefault("PENUMBRA_HTTPS", "0")
# Request threads of the loopback server must not keep connections open after they finish.
os.environ.setdefault("DB_CONN_MAX_AGE", "0")
# Saves enqueue their recomputation on a real broker, as in production, on a queue of the benchmark's own that no
# worker consumes (emptied at the end); without it Celery would run the aggregation inside every timed request.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/1")
os.environ.setdefault("CELERY_QUEUE", "bench-annotate")

ITEM_ID = re.compile(r'data-item="(\d+)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FIELD = re.compile(r'name="((?:mu|nu)-\d+-\d+)"')


def _ensure_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def build_project(*, n_items: int, n_annotators: int, name: str):
    from bench_items import items_create
    from django.contrib.auth import get_user_model

    from projects.models import Membership, Project
    from projects.services import blind_sample_redraw, membership_set, project_create

    existing = Project.objects.filter(name=name).first()
    if existing is not None:
        return existing
    started = time.perf_counter()
    project = project_create(
        name=name, seed=4242, overlap=3, suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE, blind_rate=0.2
    )
    batch = 5000
    for start in range(0, n_items, batch):
        ids = [f"bench-{i}" for i in range(start, min(n_items, start + batch))]
        items_create(project=project, external_ids=ids, prompt="Prompt {external_id}: explain recursion to a child.")
    blind_sample_redraw(project=project)
    user_model = get_user_model()
    for n in range(n_annotators):
        user, _ = user_model.objects.get_or_create(username=f"bench-annotator-{n}")
        membership_set(project=project, user=user, role=Membership.Role.ANNOTATOR)
    print(f"  built {name}: {n_items:,} items in {time.perf_counter() - started:.1f} s", flush=True)
    return project


def _form(html: str, token: str) -> dict[str, str]:
    data = {"csrfmiddlewaretoken": CSRF.search(html).group(1), "client_token": token, "time_spent_ms": "3000"}
    for name in FIELD.findall(html):
        data[name] = "500" if name.startswith("mu") else "200"
    return data


def measure(project, *, rounds: int, n_annotators: int) -> dict[str, float]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    users = list(get_user_model().objects.filter(username__startswith="bench-annotator-").order_by("username"))
    users = users[:n_annotators]
    clients = []
    for user in users:
        client = Client()
        client.force_login(user)
        clients.append(client)
    next_url = reverse("annotate_next", kwargs={"project_id": project.pk})

    # Query count of the next-item page (a fresh claim), taken once warm.
    clients[0].get(next_url)
    html = clients[0].get(next_url).content.decode()
    item_id = ITEM_ID.search(html).group(1)
    clients[0].post(reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item_id}), _form(html, "w"))
    with CaptureQueriesContext(connection) as queries:
        clients[0].get(next_url)
    page_queries = len(queries)

    next_times, save_times = [], []
    for round_number in range(rounds):
        client = clients[round_number % len(clients)]
        started = time.perf_counter()
        response = client.get(next_url)
        next_times.append(time.perf_counter() - started)
        html = response.content.decode()
        found = ITEM_ID.search(html)
        if found is None:
            break
        url = reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": found.group(1)})
        data = _form(html, f"r{round_number}-{time.time_ns()}")
        started = time.perf_counter()
        saved = client.post(url, data)
        save_times.append(time.perf_counter() - started)
        assert saved.status_code == 302, saved.status_code

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return {
        "queries": page_queries,
        "next_median": statistics.median(next_times) * 1000,
        "next_p95": pct(next_times, 0.95),
        "save_median": statistics.median(save_times) * 1000,
        "save_p95": pct(save_times, 0.95),
        "rounds": len(save_times),
    }


def concurrent_load(
    project, *, threads: int, seconds: float, saves_per_thread: int, server_kind: str, gunicorn_workers: int
) -> dict[str, float]:
    """``threads`` annotators on a loopback server, each: next item, save, repeat; bounded in count and time.

    ``server_kind`` "gunicorn" runs the production server (gthread workers) as a child process; "dev" runs Django's
    threaded development server in this process (GIL-bound: a floor, not a production figure).
    """
    import httpx
    from django.contrib.auth import get_user_model
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from django.test import Client
    from django.urls import reverse

    from projects.models import Membership
    from projects.services import membership_set

    process = None
    if server_kind == "dev":

        class QuietHandler(WSGIRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler)
        server.set_app(get_wsgi_application())
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
    else:
        import socket
        import subprocess

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        environment = dict(os.environ, DB_CONN_MAX_AGE="60")
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"),
                *("--workers", str(gunicorn_workers), "--threads", "4", "--worker-class", "gthread"),
                *("--log-level", "warning"),
            ],
            cwd=str(Path(__file__).resolve().parent.parent),
            env=environment,
        )
        for _ in range(100):
            try:
                if httpx.get(base + "/accounts/login/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)

    user_model = get_user_model()
    cookies = []
    for n in range(threads):
        user, _ = user_model.objects.get_or_create(username=f"bench-load-{n}")
        membership_set(project=project, user=user, role=Membership.Role.ANNOTATOR)
        client = Client()
        client.force_login(user)
        cookies.append({key: morsel.value for key, morsel in client.cookies.items()})

    next_path = reverse("annotate_next", kwargs={"project_id": project.pk})
    save_times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def annotator(index: int) -> None:
        with httpx.Client(base_url=base, cookies=cookies[index], timeout=30) as http:
            for n in range(saves_per_thread):
                if time.perf_counter() > deadline:
                    return
                page = http.get(next_path)
                found = ITEM_ID.search(page.text)
                if found is None:
                    return
                data = _form(page.text, f"load-{index}-{n}-{time.time_ns()}")
                url = reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": found.group(1)})
                started = time.perf_counter()
                saved = http.post(url, data=data, headers={"Referer": base + url})
                elapsed = time.perf_counter() - started
                with lock:
                    if saved.status_code in (302, 200):
                        save_times.append(elapsed)
                    else:
                        errors.append(str(saved.status_code))

    started = time.perf_counter()
    workers = [threading.Thread(target=annotator, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started
    if process is not None:
        process.terminate()
        process.wait(timeout=30)
    else:
        server.shutdown()
    ordered = sorted(save_times) or [0.0]
    return {
        "saves": len(save_times),
        "errors": len(errors),
        "wall": wall,
        "saves_per_s": len(save_times) / wall if wall else 0.0,
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000,
        "median": statistics.median(ordered) * 1000,
    }


def _empty_queue() -> None:
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    queue = os.environ["CELERY_QUEUE"]
    client.delete(queue, *client.keys(f"penumbra:{queue}:*"), *client.keys(f"_kombu.binding*.{queue}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 100_000])
    parser.add_argument("--rounds", type=int, default=200, help="next-item + save pairs per size")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the projects (and reuse them next run)")
    parser.add_argument("--concurrent", action="store_true", help="also run the loopback load test")
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--saves-per-thread", type=int, default=20)
    parser.add_argument("--server", choices=["gunicorn", "dev"], default="gunicorn")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes (4 threads each)")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database of its own (it is created when missing).")
    _ensure_database(url)

    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("celery").setLevel(logging.WARNING)
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)

    results = {}
    projects = []
    for size in args.sizes:
        project = build_project(n_items=size, n_annotators=args.annotators, name=f"bench-annotate-{size}")
        projects.append(project)
        results[size] = measure(project, rounds=args.rounds, n_annotators=args.annotators)

    print()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"Annotation page, server time in-process (Django test Client, PostgreSQL); load average {load}")
    header = (
        f"{'items':>10} {'queries':>8} {'next med':>9} {'next p95':>9} {'save med':>9} {'save p95':>9} {'rounds':>7}"
    )
    print(header)
    for size, r in results.items():
        print(
            f"{size:>10,} {r['queries']:>8} {r['next_median']:>7.1f}ms {r['next_p95']:>7.1f}ms "
            f"{r['save_median']:>7.1f}ms {r['save_p95']:>7.1f}ms {r['rounds']:>7}"
        )
    if len(results) >= 2:
        small, large = results[min(results)], results[max(results)]
        print(
            f"ratio largest/smallest: queries {large['queries'] / small['queries']:.2f}, "
            f"next {large['next_median'] / small['next_median']:.2f}x, "
            f"save {large['save_median'] / small['save_median']:.2f}x"
        )

    if args.concurrent:
        load = concurrent_load(
            projects[-1],
            threads=args.threads,
            seconds=args.seconds,
            saves_per_thread=args.saves_per_thread,
            server_kind=args.server,
            gunicorn_workers=args.workers,
        )
        print()
        server_name = f"gunicorn, {args.workers} gthread workers" if args.server == "gunicorn" else "dev server"
        print(f"Loopback load: {args.threads} annotator threads, {max(args.sizes):,} items ({server_name})")
        print(
            f"  {load['saves']} saves in {load['wall']:.1f} s = {load['saves_per_s']:.1f} saves/s; "
            f"save median {load['median']:.1f} ms, p95 {load['p95']:.1f} ms; errors {load['errors']}"
        )

    _empty_queue()
    if not args.keep:
        for project in projects:
            project.delete()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
