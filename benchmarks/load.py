"""Many annotators at once, doing exactly what the page does, against the production stack on loopback.

Starts gunicorn (gthread), a Celery worker and nothing else on free 127.0.0.1 ports against PostgreSQL and Redis,
builds a project per run, and lets N simulated annotators work for a fixed time: log in (CSRF), open the page,
then the single-request htmx flow (one POST saves and returns the next item's fragment), now and then a skip with a
reason, a step back to the previous item to edit it, or a reload of the current one. A separate lead client polls
``/api/projects/{id}/stats/`` to measure freshness: save acknowledged → counted in ``progress.labels_total``.
Afterwards the database is checked: every acknowledged save present exactly once (one revision per acknowledged
save) with the values last acknowledged, and no annotation nobody was told was saved.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_load python benchmarks/load.py
    options: --mode closed|paced|both  --annotators 1 10 50  --seconds 30  --rate 40  --items 1000
             --workers 1 --threads 8  --app-dir DIR (run another checkout's code, e.g. the previous release)

The client is a thread per annotator on httpx rather than locust: no new dependency, and the script must know
exactly which saves were acknowledged (the client token and the values of every 200) to check the database, which
is simplest in plain code. Threads spend their time waiting on sockets; parsing a fragment is a few regexes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "load-bench-password"
ITEM_ID = re.compile(r'data-item="(\d+)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FIELD = re.compile(r'name="((?:mu|nu)-(\d+)-(\d+))"')
CLIENT_TOKEN = re.compile(r'name="client_token" value="([^"]*)"')
FORM_ACTION = re.compile(r'id="annotate-form" method="post" action="([^"]+)"')
SKIP_ACTION = re.compile(r'action="([^"]+/skip/)"')
CRITERION_NAME = "overall"


# --- building the project (runs in a subprocess, inside the code under test) ---------------------------------------


def build(*, name: str, n_items: int, n_annotators: int) -> dict[str, object]:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from projects import blind
    from projects.models import Item, Membership, Project, Response, Suggestion
    from projects.services import blind_sample_redraw, membership_set, project_create

    project = project_create(
        name=name, seed=4242, overlap=3, suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE, blind_rate=0.2
    )
    ids = [f"load-{i}" for i in range(n_items)]
    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=external_id,
                prompt=f"Prompt {external_id}: explain **recursion** to a child.",
                blind_draw=blind.uniform_draw(seed=project.seed, external_id=external_id),
                queue_key=blind.queue_key(seed=project.seed, external_id=external_id),
            )
            for external_id in ids
        ]
    )
    Response.objects.bulk_create(
        [
            Response(item=item, position=p, text=f"Answer {p} to {item.external_id}.\n\n```python\nprint({p})\n```")
            for item in items
            for p in (0, 1)
        ]
    )
    Suggestion.objects.bulk_create(
        [Suggestion(item=item, preferred_position=1, rationale="More complete.", model_name="bench") for item in items]
    )
    blind_sample_redraw(project=project)
    # One hash for everybody: hashing 50 passwords would take longer than the run.
    hashed = make_password(PASSWORD)
    user_model = get_user_model()
    names = [f"load-annotator-{n}" for n in range(n_annotators)]
    for username in [*names, "load-lead"]:
        user, _ = user_model.objects.get_or_create(username=username)
        user.password = hashed
        user.save(update_fields=["password"])
        role = Membership.Role.LEAD if username == "load-lead" else Membership.Role.ANNOTATOR
        membership_set(project=project, user=user, role=role)
    return {"project": project.pk, "annotators": names}


# --- the stack -------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_database(url: str) -> None:
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

    def start(self, *, workers: int, threads: int, logs: Path) -> None:
        bin_dir = Path(sys.executable).parent
        web = [
            str(bin_dir / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--backlog",
            "512",
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


# --- the annotators ------------------------------------------------------------------------------------------------


@dataclass
class Results:
    save_ms: list[float] = field(default_factory=list)
    next_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    saves: int = 0
    first_saves: list[float] = field(default_factory=list)  # monotonic ack times of first saves
    # (annotator, item id) → (values acknowledged last, number of acknowledged saves)
    acknowledged: dict[tuple[str, int], tuple[dict[tuple[int, int], tuple[int, int]], int]] = field(
        default_factory=dict
    )
    queue_empty: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


# Password hashing is deliberately slow: 50 logins at once would time out on a small machine before the run starts.
_LOGINS = threading.Semaphore(4)


def _login(client, base: str, username: str) -> None:  # type: ignore[no-untyped-def]
    with _LOGINS:
        _login_now(client, base, username)


def _login_now(client, base: str, username: str) -> None:  # type: ignore[no-untyped-def]
    page = client.get(f"{base}/accounts/login/")
    token = CSRF.search(page.text).group(1)
    response = client.post(
        f"{base}/accounts/login/",
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    if response.status_code not in (200, 302) or "sessionid" not in client.cookies:
        raise RuntimeError(f"login of {username} failed: {response.status_code}")


class Annotator(threading.Thread):
    def __init__(
        self,
        *,
        base: str,
        project_id: int,
        username: str,
        results: Results,
        start: threading.Barrier,
        until: list[float],
        interval: float,
        seed: int,
    ) -> None:
        super().__init__(daemon=True)
        self.base, self.project_id, self.username = base, project_id, username
        self.results, self.start_barrier, self.until, self.interval = results, start, until, interval
        self.random = random.Random(seed)

    def _htmx(self, url: str) -> dict[str, str]:
        return {"HX-Request": "true", "HX-Current-URL": url, "HX-Target": "annotate-frame", "Referer": url}

    def run(self) -> None:
        import httpx

        with httpx.Client(timeout=60, follow_redirects=True) as client:
            try:
                _login(client, self.base, self.username)
                page = client.get(f"{self.base}/projects/{self.project_id}/annotate/").text
            except Exception as error:
                with self.results.lock:
                    self.results.errors.append(f"{self.username}: {error}")
                self.start_barrier.wait()
                return
            self.start_barrier.wait()
            next_at = time.monotonic() + self.random.uniform(0, self.interval)
            while time.monotonic() < self.until[0]:
                if self.interval:
                    delay = next_at - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    next_at = max(next_at + self.interval, time.monotonic() - self.interval)
                    if time.monotonic() >= self.until[0]:
                        break
                page = self._step(client, page)
                if page is None:
                    break

    def _step(self, client, page: str) -> str | None:  # type: ignore[no-untyped-def]
        item_match, action = ITEM_ID.search(page), FORM_ACTION.search(page)
        if item_match is None or action is None:
            with self.results.lock:
                self.results.queue_empty += 1
            return None
        item_id = int(item_match.group(1))
        url = self.base + action.group(1)
        csrf = CSRF.search(page).group(1)
        roll = self.random.random()
        if roll < 0.03:  # skip with a reason
            skip = SKIP_ACTION.search(page)
            data = {"csrfmiddlewaretoken": csrf, "skip_reason": "I cannot judge this topic"}
            return self._timed(client, "POST", self.base + skip.group(1), data, url, "save", page)
        if roll < 0.06:  # back to the previous item, to edit it
            target = f"{self.base}/projects/{self.project_id}/annotate/previous/?before={item_id}"
            return self._timed(client, "GET", target, None, url, "next", page)
        if roll < 0.10:  # a reload (the page asks for its current item again)
            target = f"{self.base}/projects/{self.project_id}/annotate/"
            return self._timed(client, "GET", target, None, url, "next", page)
        values: dict[tuple[int, int], tuple[int, int]] = {}
        data = {
            "csrfmiddlewaretoken": csrf,
            "client_token": CLIENT_TOKEN.search(page).group(1) or uuid.uuid4().hex,
            "time_spent_ms": str(self.random.randint(2000, 20000)),
            "stage": "label",
        }
        for name, position, criterion in FIELD.findall(page):
            key = (int(position), int(criterion))
            mu, nu = values.get(key, (self.random.randrange(0, 101) * 10, None))
            if name.startswith("nu"):
                nu = self.random.randrange(0, 101 - mu // 10) * 10
            values[key] = (mu, nu if nu is not None else 0)
        for (position, criterion), (mu, nu) in values.items():
            data[f"mu-{position}-{criterion}"], data[f"nu-{position}-{criterion}"] = str(mu), str(nu)
        started = time.monotonic()
        answer = self._request(client, "POST", url, data, url)
        if answer is None:
            return page
        elapsed = (time.monotonic() - started) * 1000
        with self.results.lock:
            self.results.save_ms.append(elapsed)
            if answer.status_code != 200 or "Saved." not in answer.text:
                self.results.errors.append(f"save {answer.status_code}: {answer.text[:120]!r}")
                return answer.text if answer.status_code == 200 else page
            self.results.saves += 1
            key = (self.username, item_id)
            previous = self.results.acknowledged.get(key)
            if previous is None:
                self.results.first_saves.append(time.monotonic())
            self.results.acknowledged[key] = (values, (previous[1] if previous else 0) + 1)
        return answer.text

    def _request(self, client, method: str, url: str, data, current: str):  # type: ignore[no-untyped-def]
        try:
            if method == "POST":
                return client.post(url, data=data, headers=self._htmx(current))
            return client.get(url, headers=self._htmx(current))
        except Exception as error:
            with self.results.lock:
                self.results.errors.append(f"{method} {url}: {type(error).__name__}")
            return None

    def _timed(self, client, method, url, data, current, kind, page):  # type: ignore[no-untyped-def]
        started = time.monotonic()
        answer = self._request(client, method, url, data, current)
        if answer is None:
            return page
        with self.results.lock:
            (self.results.save_ms if kind == "save" else self.results.next_ms).append(
                (time.monotonic() - started) * 1000
            )
            if answer.status_code != 200:
                self.results.errors.append(f"{method} {answer.status_code}")
                return page
        return answer.text


class Lead(threading.Thread):
    """Polls the stats API and records (time, labels counted) whenever the count changes."""

    def __init__(self, *, base: str, project_id: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base, self.project_id, self.stop_event = base, project_id, stop
        self.seen: list[tuple[float, int]] = []
        self.errors = 0

    def run(self) -> None:
        import httpx

        with httpx.Client(timeout=30) as client:
            _login(client, self.base, "load-lead")
            last = -1
            while not self.stop_event.is_set():
                try:
                    response = client.get(f"{self.base}/api/projects/{self.project_id}/stats/")
                    total = int((response.json().get("progress") or {}).get("labels_total", 0))
                except Exception:
                    self.errors += 1
                    total = last
                if total != last:
                    self.seen.append((time.monotonic(), total))
                    last = total
                self.stop_event.wait(0.2)


def _freshness(first_saves: list[float], seen: list[tuple[float, int]]) -> list[float]:
    """Seconds from the k-th acknowledged first save to the first poll that counted k labels."""
    lags: list[float] = []
    position = 0
    for k, acked in enumerate(sorted(first_saves), start=1):
        while position < len(seen) and seen[position][1] < k:
            position += 1
        if position == len(seen):
            break
        lags.append(max(0.0, seen[position][0] - acked))
    return lags


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


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
    stale = json.loads(
        stack.run(
            "-c",
            "import django, json; django.setup(); from aggregation import services; "
            f"print(json.dumps(len(services.stale_items_list().get({project_id}, []))))",
        ).strip()
    )
    return {"queued_tasks": queued, "dirty_items": dirty, "stale_items": int(stale)}


# --- one run -------------------------------------------------------------------------------------------------------


def run_once(stack: Stack, *, n: int, seconds: float, items: int, rate: float | None, label: str) -> dict[str, object]:
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
    started = time.monotonic()
    until[0] = started + seconds
    lead.start()
    for annotator in annotators:
        annotator.join(timeout=seconds + 120)
    elapsed = time.monotonic() - started
    # Freshness needs the last saves to become visible: keep polling a while after the annotators stop.
    time.sleep(5)
    after = backlog(stack, project_id)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and lead.seen and lead.seen[-1][1] < len(results.first_saves):
        time.sleep(0.5)
    stop.set()
    lead.join(timeout=10)
    lags = _freshness(results.first_saves, lead.seen)
    problems = verify(stack.env["DATABASE_URL"], project_id, results)
    return {
        "label": label,
        "annotators": n,
        "offered": f"{rate:g} items/s" if rate else "closed loop",
        "seconds": round(elapsed, 1),
        "saves": results.saves,
        "items_per_s": round(results.saves / elapsed, 1),
        "save_ms": [round(_pct(results.save_ms, q)) for q in (0.5, 0.95, 0.99)],
        "next_ms": [round(_pct(results.next_ms, q)) for q in (0.5, 0.95, 0.99)],
        "errors": len(results.errors),
        "error_sample": results.errors[:3],
        "queue_empty": results.queue_empty,
        "freshness_s": [round(_pct(lags, q), 2) for q in (0.5, 0.95)] + [round(max(lags), 2) if lags else None],
        "fresh_measured": f"{len(lags)}/{len(results.first_saves)}",
        "backlog_5s_after": after,
        "database_check": "ok" if not problems else [*problems[:5], f"{len(problems)} problems"],
    }


def _print(result: dict[str, object]) -> None:
    save, nxt, fresh = result["save_ms"], result["next_ms"], result["freshness_s"]
    print(
        f"{result['label']:>12} N={result['annotators']:<3} {result['offered']:>12}: "
        f"{result['items_per_s']:6.1f} items/s ({result['saves']} saves in {result['seconds']} s) | "
        f"save p50/p95/p99 {save[0]}/{save[1]}/{save[2]} ms | next {nxt[0]}/{nxt[1]}/{nxt[2]} ms | "
        f"errors {result['errors']} | freshness p50/p95/max {fresh[0]}/{fresh[1]}/{fresh[2]} s "
        f"({result['fresh_measured']}) | backlog +5 s {result['backlog_5s_after']} | db {result['database_check']}",
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
    parser.add_argument("--mode", choices=["closed", "paced", "both"], default="both")
    parser.add_argument("--annotators", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rate", type=float, default=40, help="items/s offered in total in paced mode")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--app-dir", type=Path, default=ROOT)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("Set DATABASE_URL to a PostgreSQL database for the benchmark (it is created if missing).")
    if urlparse(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("The load benchmark runs on loopback only.")
    _ensure_database(url)
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"penumbra-load-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(args.app_dir.resolve()),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/1"),
        "CELERY_QUEUE": f"load-{os.getpid()}",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "load-benchmark-secret-key-0000000000000000000000"),
        "DEBUG": "0",
        "PENUMBRA_DATA_DIR": str(logs),
        "AGGREGATION_PROJECT_DELAY": os.environ.get("AGGREGATION_PROJECT_DELAY", "1"),
        "LOG_LEVEL": "WARNING",
    }
    stack = Stack(app_dir=args.app_dir.resolve(), env=env, port=_free_port())
    stack.run("manage.py", "migrate", "--noinput")
    print(
        f"gunicorn gthread {args.workers} worker(s) × {args.threads} threads, one Celery worker, "
        f"{args.items} items per run, code from {stack.app_dir}; logs in {logs}",
        flush=True,
    )
    stack.start(workers=args.workers, threads=args.threads, logs=logs)
    results = []
    try:
        if args.mode in ("closed", "both"):
            for n in args.annotators:
                results.append(run_once(stack, n=n, seconds=args.seconds, items=args.items, rate=None, label="closed"))
                _print(results[-1])
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
            f"paced: save p95 {p['save_ms'][1]} ms (target ≤ 250), freshness p95 {p['freshness_s'][1]} s "
            f"(target ≤ 2), backlog 5 s after {p['backlog_5s_after']} (target none)"
        )


if __name__ == "__main__":
    main()
