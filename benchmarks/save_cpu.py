"""Web-process CPU of one save-and-next and of one next-item GET, in-process, on PostgreSQL (no profiler unless asked).

Builds a project (benchmarks/load_stack.build: 1,000 items by default) and drives the real views through Django's
test Client as the page's htmx does: one POST that saves the shown item and returns the next. CPU is
``time.process_time`` of this process over N requests (Django, templates, the database driver; the database server's
own work is not counted), so two checkouts can be compared back to back in one window:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_cpu python benchmarks/save_cpu.py
    DATABASE_URL=... python benchmarks/save_cpu.py --app-dir /tmp/other_checkout     # the same run on other code
    options: --items 1000  --saves 200  --gets 200  --warmup 20  --profile [--top 40]

The next-item GET is the annotate page while the annotator holds a claim (a reload), the GET every visit starts
with. Without DATABASE_URL the script refuses: SQLite figures say nothing about production.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app-dir", type=Path, default=HERE.parent, help="checkout whose code is measured")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--gets", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="also profile the saves; print the top entries")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="cumulative", help="pstats order of the profile: cumulative, tottime …")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database (it is migrated, and a project is added to it).")

    app_dir = args.app_dir.resolve()
    sys.path[:0] = [str(app_dir), str(HERE)]
    os.chdir(app_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["PENUMBRA_HTTPS"] = "0"
    from load_stack import SECRET_KEY, ensure_database

    os.environ.setdefault("SECRET_KEY", SECRET_KEY)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/1")
    # Saves enqueue their recomputation on a queue no worker consumes: the aggregation must not run in the request.
    os.environ.setdefault("CELERY_QUEUE", "bench-save-cpu")

    ensure_database(os.environ["DATABASE_URL"])  # created when missing, as the other benchmarks do

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from load_client import CSRF, FIELD, FORM_ACTION
    from load_stack import build

    call_command("migrate", verbosity=0)
    info = build(name=f"save-cpu-{uuid.uuid4().hex[:8]}", n_items=args.items, n_annotators=1)
    project_id = info["project"]
    user = get_user_model().objects.get(username=info["annotators"][0])  # type: ignore[index]
    client = Client()
    client.force_login(user)
    page_url = f"/projects/{project_id}/annotate/"
    page = client.get(page_url).content.decode()

    def save(page: str) -> str:
        action = FORM_ACTION.search(page)
        csrf = CSRF.search(page)
        if action is None or csrf is None:
            raise SystemExit(f"No form on the page: {page[:300]}")
        url = action.group(1)
        data = {"csrfmiddlewaretoken": csrf.group(1), "client_token": uuid.uuid4().hex, "time_spent_ms": "3000"}
        data["stage"] = "label"
        for name, position, criterion in FIELD.findall(page):
            data[f"{name.split('-')[0]}-{position}-{criterion}"] = "300"
        response = client.post(
            url, data, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="annotate-frame", HTTP_HX_CURRENT_URL=url
        )
        if response.status_code != 200 or b"Saved." not in response.content:
            raise SystemExit(f"Save refused ({response.status_code}): {response.content[:300]!r}")
        return response.content.decode()

    def get() -> None:
        response = client.get(page_url)
        if response.status_code != 200:
            raise SystemExit(f"GET failed ({response.status_code}): {response.content[:300]!r}")

    for _ in range(args.warmup):
        page = save(page)
        get()

    started = time.process_time()
    for _ in range(args.gets):
        get()
    get_ms = (time.process_time() - started) / args.gets * 1000

    started = time.process_time()
    for _ in range(args.saves):
        page = save(page)
    save_ms = (time.process_time() - started) / args.saves * 1000

    print(f"code: {app_dir}")
    print(f"items {args.items}; {args.saves} saves, {args.gets} GETs after {args.warmup} warm-up rounds")
    print(f"CPU per save-and-next POST: {save_ms:6.1f} ms")
    print(f"CPU per next-item GET:      {get_ms:6.1f} ms")

    if args.profile:
        import cProfile
        import pstats

        # Timed by CPU, not the clock: waits on PostgreSQL and Redis are not the web process's cost.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(min(args.saves, 60)):
            page = save(page)
        profiler.disable()
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
