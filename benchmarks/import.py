"""Import of 100,000 items (then 300,000 labels, 3 annotators per item): wall time and rows per second.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_import python benchmarks/import.py
    options: --items 100000  --annotators 3  --no-labels

The database is created and migrated when missing; every run imports into a fresh project (older benchmark projects
are deleted first). The item file is the native JSON Lines shape with two responses and an LLM suggestion per item,
written to a temporary file and read line by line, as ``manage.py import_items`` and the import job do. Items go
through projects.imports.items.items_import, labels through annotation.imports.labels.labels_import, each with a tqdm
progress bar. Target: 100,000 items in ≤ 30 s. Without DATABASE_URL the script refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

SLUG_PREFIX = "bench-import"


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def write_items(path: Path, n_items: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n_items):
            row = {
                "id": f"item-{i:07d}",
                "prompt": f"Prompt {i}: summarise the following post in two sentences. " * 4,
                "responses": [
                    {"text": f"Response A to item {i}. " * 12, "model": "model-a"},
                    {"text": f"Response B to item {i}. " * 12, "model": "model-b"},
                ],
                "suggestion": {"preferred": i % 2, "rationale": "Shorter and more faithful.", "model": "judge"},
                "metadata": {"source": "benchmark"},
            }
            handle.write(json.dumps(row) + "\n")


def write_labels(path: Path, n_items: int, n_annotators: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n_items):
            for a in range(n_annotators):
                mu0, mu1 = (i * 7 + a * 13) % 700, (i * 11 + a * 5) % 700
                row = {
                    "item": f"item-{i:07d}",
                    "annotator": f"bench-import-annotator-{a}",
                    "mode": "ifs",
                    "values": [
                        {"position": 0, "mu": mu0 / 1000, "nu": 0.25},
                        {"position": 1, "mu": mu1 / 1000, "nu": 0.1},
                    ],
                    "time_spent_ms": 8000,
                }
                handle.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--no-labels", action="store_true")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a dedicated PostgreSQL database, e.g. postgres://…/penumbra_bench_import")
    ensure_database(url)

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.db import connection
    from tqdm import tqdm

    from annotation.imports.labels import labels_import
    from config import events
    from projects.imports.items import items_import
    from projects.models import Project
    from projects.services import blind_sample_redraw, project_create

    Project.objects.filter(slug__startswith=SLUG_PREFIX).delete()
    project = project_create(name="Import benchmark", seed=11)
    Project.objects.filter(pk=project.pk).update(slug=f"{SLUG_PREFIX}-{project.pk}")
    project.refresh_from_db()

    with tempfile.TemporaryDirectory() as folder:
        items_file = Path(folder) / "items.jsonl"
        write_items(items_file, args.items)
        size = items_file.stat().st_size
        with items_file.open(encoding="utf-8") as handle, tqdm(total=args.items, unit="row", desc="items") as bar:

            def progress(done: int, _total: int | None) -> None:
                bar.update(max(0, done - bar.n))

            started = time.perf_counter()
            result = items_import(project=project, lines=handle, progress=progress, total_lines=args.items)
            items_elapsed = time.perf_counter() - started
        print(
            f"items:  {result.created:,} created from {size / 2**20:.1f} MiB in {items_elapsed:.2f} s "
            f"({result.created / items_elapsed:,.0f} items/s); target ≤ 30 s: "
            f"{'met' if items_elapsed <= 30 else 'MISSED'}"
        )

        # The slowest phase, timed on its own: it runs again here exactly as at the end of items_import.
        started = time.perf_counter()
        blind_sample_redraw(project=project)
        print(f"        of which the blind-sample redraw over all items takes {time.perf_counter() - started:.2f} s")

        # Labels usually arrive long after their items, once autovacuum has analysed them; here it is seconds later.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

        if not args.no_labels:
            labels_file = Path(folder) / "labels.jsonl"
            write_labels(labels_file, args.items, args.annotators)
            total = args.items * args.annotators
            # Without a broker the recomputation that labels_import hands to Celery would run here, inside the
            # timed call; in production workers do it. Record the hand-off instead (aggregation has its own benchmark).
            handed_off: list[int] = []
            events.LABELS_CHANGED.disconnect(dispatch_uid="aggregation.labels_changed")
            events.LABELS_CHANGED.connect(
                lambda *, item_ids, **_: handed_off.extend(item_ids), weak=False, dispatch_uid="bench.handed_off"
            )
            with labels_file.open(encoding="utf-8") as handle, tqdm(total=total, unit="row", desc="labels") as bar:
                started = time.perf_counter()
                labelled = labels_import(
                    project=project, lines=handle, progress=lambda done: bar.update(max(0, done - bar.n))
                )
                labels_elapsed = time.perf_counter() - started
            print(
                f"labels: {labelled.created:,} IFS labels ({args.annotators} per item, 2 responses) in "
                f"{labels_elapsed:.2f} s ({labelled.created / labels_elapsed:,.0f} labels/s); "
                f"recomputation handed off for {len(handed_off):,} items"
            )
    print(f"process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
