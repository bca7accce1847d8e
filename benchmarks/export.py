"""Export of 100,000 items labelled by 3 annotators each: time and memory of the streamed ``dpo`` export.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_export python benchmarks/export.py
    options: --items 100000  --annotators 3  --chunk-size 2000  --rebuild (drop and rebuild the benchmark project)

The database is created and migrated when missing; the project (items, two responses each, 3 IFS labels per item,
item and response aggregates shaped like the aggregation engine's) is built once with COPY and reused. Then:
- the ``dpo`` export through aggregation.exports.stream.export_lines (what the command and the API stream), and
- the same export through the API (GET /api/projects/{id}/export/, consumed chunk by chunk as a client would),
each timed, with the process RSS sampled every 5 ms: RSS before, peak during and growth. A second run over the first
10 % of the items shows that memory does not grow with the export's size. Target: ≤ 10 s with flat memory.
Without DATABASE_URL the script refuses: SQLite figures say nothing about production.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Plain HTTP on loopback: the production settings would redirect every request to https.
os.environ.setdefault("PENUMBRA_HTTPS", "0")

SLUG = "bench-export"
PAGE = os.sysconf("SC_PAGE_SIZE")


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


class RssSampler:
    """Samples RSS in a thread while a block runs: the peak and the growth over the starting value."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.start = self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.interval)

    def __enter__(self) -> RssSampler:
        self.start = self.peak = rss_bytes()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def _copy(cursor, model, columns: list[str], rows, *, now) -> None:
    """COPY rows into ``model``'s table. Every other column gets its model default, or ``now`` where the model sets
    it on save (auto_now, auto_now_add): the rows name only what the benchmark chooses, and a column added later (NOT
    NULL with a default in the model) does not break the benchmark on a fresh database."""
    import json

    rest = [f for f in model._meta.concrete_fields if not f.primary_key and f.attname not in columns]
    rest = [f for f in rest if f.has_default() or not f.null]
    stamped = {f.attname for f in rest if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)}
    defaults = [now if f.attname in stamped else f.get_default() for f in rest]
    defaults = [json.dumps(value) if isinstance(value, dict | list) else value for value in defaults]
    names = [*columns, *(f.column for f in rest)]
    with cursor.copy(f"COPY {model._meta.db_table} ({', '.join(names)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([*row, *defaults])


def build(n_items: int, n_annotators: int) -> int:
    """The benchmark project, built with COPY (the export reads it; how it got there is not measured)."""
    import json

    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from aggregation.models import ItemAggregate, ResponseAggregate
    from annotation.models import Annotation, JudgmentValue
    from projects.models import Item, Membership, Project, Response
    from projects.services import project_create

    project = project_create(name="Export benchmark", seed=7)
    Project.objects.filter(pk=project.pk).update(slug=SLUG, labelling_started_at=timezone.now())
    criterion_id = project.criteria.get().pk
    user_model = get_user_model()
    annotators = []
    for index in range(n_annotators):
        user, _ = user_model.objects.get_or_create(username=f"bench-export-annotator-{index}")
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": Membership.Role.ANNOTATOR})
        annotators.append(user.pk)
    rng = np.random.default_rng(7)
    now = timezone.now()
    started = time.perf_counter()
    with connection.cursor() as django_cursor:
        cursor = django_cursor.cursor
        _copy(
            cursor,
            Item,
            [
                "project_id",
                "external_id",
                "prompt",
                "metadata",
                "blind_draw",
                "is_blind",
                "queue_key",
                "annotation_count",
            ],
            (
                (
                    project.pk,
                    f"item-{i:07d}",
                    f"Prompt {i}: summarise the following post in two sentences. " * 4,
                    "{}",
                    (i * 0.618) % 1,
                    (i * 0.618) % 1 < 0.2,
                    (i * 0.318) % 1,
                    n_annotators,
                )
                for i in range(n_items)
            ),
            now=now,
        )
        item_ids = [pk for (pk,) in Item.objects.filter(project=project).order_by("id").values_list("id")]
        _copy(
            cursor,
            Response,
            ["item_id", "position", "text", "model_name"],
            (
                (item_id, position, f"Response {position} to item {item_id}. " * 12, f"model-{position}")
                for item_id in item_ids
                for position in (0, 1)
            ),
            now=now,
        )
        response_ids = np.array(
            Response.objects.filter(item__project=project).order_by("item_id", "position").values_list("id", flat=True)
        ).reshape(n_items, 2)
        # Labels: μ, ν per-mille with μ + ν ≤ 1000, per item × annotator × response.
        mu = rng.integers(0, 1001, size=(n_items, n_annotators, 2))
        nu = (rng.random((n_items, n_annotators, 2)) * (1000 - mu)).astype(int)
        _copy(
            cursor,
            Annotation,
            ["project_id", "item_id", "annotator_id", "mode", "response_order", "time_spent_ms", "revision_count"],
            (
                (project.pk, item_id, annotator, "ifs", json.dumps([0, 1]), 9000, 1)
                for item_id in item_ids
                for annotator in annotators
            ),
            now=now,
        )
        annotation_ids = np.array(
            Annotation.objects.filter(project=project).order_by("item_id", "annotator_id").values_list("id", flat=True)
        ).reshape(n_items, n_annotators)
        order = np.argsort(annotators)
        _copy(
            cursor,
            JudgmentValue,
            ["annotation_id", "response_id", "criterion_id", "mu", "nu"],
            (
                (int(annotation_ids[i, k]), int(response_ids[i, p]), criterion_id, int(mu[i, a, p]), int(nu[i, a, p]))
                for i in range(n_items)
                for k, a in enumerate(order)
                for p in (0, 1)
            ),
            now=now,
        )
        # Aggregates as the engine leaves them: the weighted mean (equal weights) of the labels.
        mean_mu, mean_nu = mu.mean(axis=1) / 1000, nu.mean(axis=1) / 1000
        score = mean_mu - mean_nu
        best = np.where(score[:, 0] >= score[:, 1], 0, 1)
        margin = np.abs(score[:, 0] - score[:, 1])
        hesitation = (1 - mu / 1000 - nu / 1000).mean(axis=(1, 2))
        operator = project.aggregation_operator
        _copy(
            cursor,
            ResponseAggregate,
            ["item_id", "response_id", "criterion_id", "operator", "mu", "nu"],
            (
                (item_ids[i], int(response_ids[i, p]), None, operator, float(mean_mu[i, p]), float(mean_nu[i, p]))
                for i in range(n_items)
                for p in (0, 1)
            ),
            now=now,
        )
        _copy(
            cursor,
            ItemAggregate,
            [
                "project_id",
                "item_id",
                "provenance",
                "operator",
                "best_position",
                "worst_position",
                "p_best",
                "margin",
                "hesitation",
                "agreement",
                "signed_preference",
                "n_annotators",
                "source_updated_at",
                "computed_at",
            ],
            (
                (
                    project.pk,
                    item_ids[i],
                    "human",
                    operator,
                    int(best[i]),
                    int(1 - best[i]),
                    0.5 + margin[i] / 4,
                    float(margin[i]),
                    float(hesitation[i]),
                    0.7,
                    float((score[i, 0] - score[i, 1]) / 2),
                    n_annotators,
                    now,
                    now,
                )
                for i in range(n_items)
            ),
            now=now,
        )
        # Autovacuum would analyse the fresh tables a little later; the planner needs the statistics now.
        cursor.execute("ANALYZE")
    print(f"built {n_items:,} items × {n_annotators} labels in {time.perf_counter() - started:.1f} s")
    return project.pk


def measure(label: str, lines_iterable) -> tuple[float, int, int, int, RssSampler]:
    count = size = 0
    with RssSampler() as sampler:
        started = time.perf_counter()
        for line in lines_iterable:
            count += 1
            size += len(line)
        elapsed = time.perf_counter() - started
    growth = sampler.peak - sampler.start
    print(
        f"{label:<34} {elapsed:7.2f} s  {count:>9,} lines  {size / 2**20:8.1f} MiB  "
        f"RSS before {sampler.start / 2**20:7.1f} MiB  peak {sampler.peak / 2**20:7.1f} MiB  "
        f"growth {growth / 2**20:6.1f} MiB"
    )
    return elapsed, count, size, growth, sampler


def api_export(client, project_id: int):
    """The streamed API export; stops with the answer's status and body when it is not one."""
    response = client.get(f"/api/projects/{project_id}/export/?format=dpo")
    if response.status_code != 200 or not response.streaming:
        sys.exit(f"GET /api/projects/{project_id}/export/ answered {response.status_code}: {response.content[:300]!r}")
    return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a dedicated PostgreSQL database, e.g. postgres://…/penumbra_bench_export")
    ensure_database(url)

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client, override_settings

    from aggregation.exports.stream import ExportOptions, export_lines
    from projects.models import Membership, Project

    project = Project.objects.filter(slug=SLUG).first()
    if project is not None and (args.rebuild or project.items.count() != args.items):
        print("dropping the previous benchmark project …")
        project.delete()
        project = None
    if project is None:
        project = Project.objects.get(pk=build(args.items, args.annotators))
    lead, _ = get_user_model().objects.get_or_create(username="bench-export-lead")
    Membership.objects.get_or_create(project=project, user=lead, defaults={"role": Membership.Role.LEAD})

    print(f"\nexport of {args.items:,} items × {args.annotators} annotators, pages of {args.chunk_size:,} items")
    options = ExportOptions(format="dpo")
    # A warm-up over a few pages, so the first timed run does not pay for imports and the catalogue cache.
    for _ in itertools.islice(export_lines(project=project, options=options), 3 * args.chunk_size):
        pass
    small = ExportOptions(format="dpo", min_margin=0.0, ties="mark")
    elapsed, count, _, growth, _ = measure(
        "dpo, export_lines", export_lines(project=project, options=options, chunk_size=args.chunk_size)
    )
    measure("dpo (ties marked), export_lines", export_lines(project=project, options=small, chunk_size=args.chunk_size))

    # The test client sends Host: testserver, which the documented settings (ALLOWED_HOSTS from the environment)
    # may not allow; allow it for the rest of this process rather than ask for different settings.
    override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"]).enable()
    client = Client()
    client.force_login(lead)
    # Warm the request path too (URL resolver, DRF, serializers are loaded on first use).
    warm = api_export(client, project.pk)
    for _ in itertools.islice(warm.streaming_content, 3 * args.chunk_size):
        pass
    warm.close()
    response = api_export(client, project.pk)
    api_elapsed, api_count, _, api_growth, _ = measure(
        "dpo, GET /api/…/export/ streamed", (chunk for chunk in response.streaming_content)
    )

    # Flat memory: the same stream stopped after a tenth of the rows grows RSS as much as the whole one.
    _, _, _, tenth_growth, _ = measure(
        "dpo, first 10 % of the rows",
        itertools.islice(export_lines(project=project, options=options, chunk_size=args.chunk_size), count // 10),
    )

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\nsummary: export_lines {elapsed:.2f} s for {count:,} rows ({count / elapsed:,.0f} rows/s), API "
        f"{api_elapsed:.2f} s for {api_count:,} chunks; "
        f"target ≤ 10 s: {'met' if max(elapsed, api_elapsed) <= 10 else 'MISSED'}"
    )
    print(
        f"RSS growth during export: 10 % of items {tenth_growth / 2**20:.1f} MiB, all items {growth / 2**20:.1f} MiB, "
        f"API {api_growth / 2**20:.1f} MiB; process peak RSS (ru_maxrss, includes the build) {peak:.0f} MiB"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
