"""End-to-end project recomputation on PostgreSQL: database read, maths, write.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench .venv/bin/python benchmarks/recompute.py

Options: --items 100000 (items, 2 responses each, 3 annotators, one criterion), --slice 300 (items timed with a
naive per-item ORM loop, extrapolated), --keep (keep the database). The script creates the database named in
DATABASE_URL if needed, migrates it, bulk-loads the data with COPY, times each phase of the recomputation the
Celery tasks run (the first whole-project run, a second full item run, a save's one item, and a run over 1 % of the
items after their values changed: handed over as the dirty set, or found by timestamps), prints the figures, the
targets (first run ≤ 15 s, 1 % ≤ 2 s) and the ratio against the naive loop. At the end it drops the database if
it created it, and otherwise deletes only the project it built.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

N_ANNOTATORS = 3


def _database_create(url: str) -> tuple[str, bool]:
    """The database's name, and whether this run created it (then, and only then, the run drops it at the end)."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name or name == "postgres":
        sys.exit(f"refusing to use database {name!r}: name a database of its own in DATABASE_URL")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists is None:
            connection.execute(f'CREATE DATABASE "{name}"')
    return name, exists is None


def _database_drop(url: str, name: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    admin = urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _copy(model: Any, values: dict[str, Any], rows: Iterable[Sequence[Any]], columns: Sequence[str]) -> None:
    """COPY rows into ``model``'s table. ``columns`` name the per-row fields; ``values`` give constant fields;
    every other concrete field gets its model default (so new columns do not break the benchmark)."""
    from django.db import connection

    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    constants: dict[str, Any] = {}
    for field in fields:
        if field.attname in columns:
            continue
        if field.attname in values:
            value = values[field.attname]
        elif field.has_default() or not field.null:
            value = field.get_default()
        else:
            value = None
        if isinstance(value, dict | list):
            value = json.dumps(value)
        constants[field.column] = value
    per_row = [model._meta.get_field(name).column for name in columns]
    names = per_row + list(constants)
    constant_values = list(constants.values())
    sql = f'COPY "{model._meta.db_table}" ({", ".join(f"{n}" for n in names)}) FROM STDIN'
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row([*row, *constant_values])


def build(n_items: int) -> int:
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Annotation, JudgmentValue
    from projects.models import Criterion, Item, Membership, Project, Response

    rng = np.random.default_rng(7)
    now = timezone.now()
    project = Project.objects.create(name="Benchmark", slug=f"bench-{int(time.time())}", labelling_started_at=now)
    criterion = Criterion.objects.create(project=project, name="overall", weight=1.0)
    users = [get_user_model().objects.create(username=f"bench-{project.pk}-{k}") for k in range(N_ANNOTATORS)]
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Membership.Role.ANNOTATOR) for u in users])

    draws = rng.random((n_items, 2))
    gold = np.where(rng.random(n_items) < 0.05, rng.integers(0, 2, n_items), -99)
    _copy(
        Item,
        {"project_id": project.pk, "created_at": now, "updated_at": now, "metadata": {}},
        (
            (
                f"i{i}",
                f"Prompt {i}",
                float(draws[i, 0]),
                float(draws[i, 1]),
                None if gold[i] < -1 else int(gold[i]),
                N_ANNOTATORS,
            )
            for i in range(n_items)
        ),
        ["external_id", "prompt", "blind_draw", "queue_key", "gold_position", "annotation_count"],
    )
    item_ids = np.array(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    _copy(
        Response,
        {"model_name": "m"},
        ((int(item_id), position, f"Answer {position}") for item_id in item_ids for position in (0, 1)),
        ["item_id", "position", "text"],
    )
    response_ids = np.array(
        Response.objects.filter(item__project=project).order_by("item_id", "position").values_list("pk", flat=True)
    ).reshape(n_items, 2)
    times = rng.integers(2_000, 60_000, (n_items, N_ANNOTATORS))
    _copy(
        Annotation,
        {
            "project_id": project.pk,
            "mode": "ifs",
            "response_order": [0, 1],
            "created_at": now,
            "updated_at": now,
            "revision_count": 1,
        },
        ((int(item_ids[i]), users[k].pk, int(times[i, k])) for i in range(n_items) for k in range(N_ANNOTATORS)),
        ["item_id", "annotator_id", "time_spent_ms"],
    )
    annotation_ids = np.array(
        Annotation.objects.filter(project=project).order_by("item_id", "annotator_id").values_list("pk", flat=True)
    ).reshape(n_items, N_ANNOTATORS)
    mu = rng.integers(0, 1001, (n_items, 2, N_ANNOTATORS))
    nu = (rng.random((n_items, 2, N_ANNOTATORS)) * (1000 - mu)).astype(int)
    _copy(
        JudgmentValue,
        {"criterion_id": criterion.pk},
        (
            (int(annotation_ids[i, k]), int(response_ids[i, r]), int(mu[i, r, k]), int(nu[i, r, k]))
            for i in range(n_items)
            for k in range(N_ANNOTATORS)
            for r in (0, 1)
        ),
        ["annotation_id", "response_id", "mu", "nu"],
    )
    return project.pk


def naive_loop(project_id: int, n_items: int) -> float:
    """The straightforward way: per item, ORM queries, Python arithmetic, update_or_create per row."""
    import math

    from django.db import transaction
    from django.utils import timezone

    from aggregation.models import ItemAggregate, ResponseAggregate
    from annotation.models import JudgmentValue
    from projects.models import Item, Project

    project = Project.objects.get(pk=project_id)
    items = list(Item.objects.filter(project=project).order_by("pk")[:n_items])
    started = time.perf_counter()
    with transaction.atomic():
        for item in items:
            values = list(JudgmentValue.objects.filter(annotation__item=item).select_related("response"))
            by_response: dict[int, list[tuple[float, float]]] = {}
            criterion_of: dict[int, int] = {}
            for value in values:
                by_response.setdefault(value.response_id, []).append((value.mu / 1000, value.nu / 1000))
                criterion_of[value.response_id] = value.criterion_id
            scores = {}
            for response_id, pairs in by_response.items():
                k = len(pairs)
                results = {
                    "weighted_mean": (sum(m for m, _ in pairs) / k, sum(n for _, n in pairs) / k),
                    "ifwa": (
                        1 - math.prod((1 - min(max(m, 1e-3), 1 - 1e-3)) ** (1 / k) for m, _ in pairs),
                        math.prod(min(max(n, 1e-3), 1 - 1e-3) ** (1 / k) for _, n in pairs),
                    ),
                    "ifwg": (
                        math.prod(m ** (1 / k) for m, _ in pairs),
                        1 - math.prod((1 - n) ** (1 / k) for _, n in pairs),
                    ),
                }
                for operator, (m, n) in results.items():
                    for criterion_id in (criterion_of[response_id], None):
                        ResponseAggregate.objects.update_or_create(
                            response_id=response_id,
                            criterion_id=criterion_id,
                            operator=operator,
                            defaults={"item": item, "mu": m, "nu": min(n, 1 - m)},
                        )
                scores[response_id] = results["weighted_mean"][0] - results["weighted_mean"][1]
            ordered = sorted(scores.values(), reverse=True)
            ItemAggregate.objects.update_or_create(
                item=item,
                defaults={
                    "project": project,
                    "operator": "weighted_mean",
                    "margin": ordered[0] - ordered[-1],
                    "p_best": 0.5 + (ordered[0] - ordered[-1]) / 4,
                    "n_annotators": len(values) // 2,
                    "computed_at": timezone.now(),
                },
            )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--slice", type=int, default=300)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://…/penumbra_bench")
    name, created = _database_create(url)
    project_id = None

    import django

    django.setup()
    from django.core.management import call_command

    from aggregation import services
    from aggregation.models import ItemAggregate, ResponseAggregate

    try:
        call_command("migrate", verbosity=0)
        print(f"{args.items:,} items × {N_ANNOTATORS} annotators × 2 responses, one criterion, PostgreSQL ({name})")
        started = time.perf_counter()
        project_id = build(args.items)
        from django.db import connection

        with connection.cursor() as cursor:
            # What autovacuum does soon after a bulk load; without statistics the planner misreads every query.
            cursor.execute("ANALYZE")
        print(f"  build with COPY, then ANALYZE: {time.perf_counter() - started:7.2f} s")

        timings: list[tuple[str, float]] = []

        def timed(label: str, function: Any) -> Any:
            began = time.perf_counter()
            result = function()
            timings.append((label, time.perf_counter() - began))
            print(f"  {label:<44} {timings[-1][1]:7.2f} s")
            return result

        # The first run of the whole-project task on a project nobody computed: weights, every item (all rows
        # inserted), agreement and plots, the judgments loaded once.
        first = timed(
            "first run: project_aggregates_recompute",
            lambda: services.project_aggregates_recompute(project_id=project_id),
        )
        end_to_end = timings[-1][1]
        print(f"      {first}")
        phases: dict[str, float] = {}
        timed(
            "item aggregates, second run (replace)",
            lambda: services.item_aggregates_recompute(project_id=project_id, phase_seconds=phases),
        )
        print(
            f"      read {phases['read']:.2f} s, maths {phases['maths']:.2f} s, write {phases['write']:.2f} s, "
            f"commit and the rest {timings[-1][1] - sum(phases.values()):.2f} s"
        )
        timed(
            "annotator weights alone (read, Eq. 8, consensus, write)",
            lambda: services.annotator_aggregates_recompute(project_id=project_id),
        )
        timed(
            "project agreement, plots, progress alone",
            lambda: services.project_agreement_recompute(project_id=project_id),
        )
        timed(
            "whole project task again (weights unmoved)",
            lambda: services.project_aggregates_recompute(project_id=project_id),
        )
        print(
            f"  rows: {ItemAggregate.objects.filter(project_id=project_id).count():,} item aggregates, "
            f"{ResponseAggregate.objects.filter(item__project_id=project_id).count():,} response aggregates"
        )
        from annotation.models import Annotation, JudgmentValue

        some_item = Annotation.objects.filter(project_id=project_id).values_list("item_id", flat=True).first()
        began = time.perf_counter()
        for _ in range(20):
            services.item_aggregates_recompute(project_id=project_id, item_ids=[some_item])
        per_save = (time.perf_counter() - began) / 20
        print(f"  {'one item (what a save triggers)':<44} {per_save * 1000:7.1f} ms")

        # 1 % of the items get a changed label (new slider values, so their figures and response rows change):
        # handed over by the dirty set (what the item task after saves does), or found from the database
        # timestamps (what reconciliation does); only those are recomputed and written.
        from django.db.models import F
        from django.db.models.functions import Greatest, Least, Now

        changed = list(
            Annotation.objects.filter(project_id=project_id)
            .order_by("?")
            .values_list("item_id", flat=True)[: max(1, args.items // 100)]
        )
        JudgmentValue.objects.filter(annotation__item_id__in=changed).update(mu=Least(F("mu") + 1, 1000 - F("nu")))
        Annotation.objects.filter(item_id__in=changed).update(updated_at=Now())
        phases = {}
        timed(
            f"1 % changed: recompute the {len(set(changed)):,} dirty items",
            lambda: services.item_aggregates_recompute(project_id=project_id, item_ids=changed, phase_seconds=phases),
        )
        dirty_run = timings[-1][1]
        print(
            f"      read {phases['read']:.2f} s, maths {phases['maths']:.2f} s, write {phases['write']:.2f} s, "
            f"commit and the rest {dirty_run - sum(phases.values()):.2f} s"
        )
        JudgmentValue.objects.filter(annotation__item_id__in=changed).update(mu=Greatest(F("mu") - 1, 0))
        Annotation.objects.filter(item_id__in=changed).update(updated_at=Now())
        stale = timed("1 % changed: find stale items (timestamps)", lambda: services.stale_items_list())
        stale_ids = stale.get(project_id, [])
        timed(
            f"1 % changed: recompute those {len(stale_ids):,} items",
            lambda: services.item_aggregates_recompute(project_id=project_id, item_ids=stale_ids),
        )
        print(f"  {'1 % changed, find + recompute':<44} {sum(t for _, t in timings[-2:]):7.2f} s")
        for label, seconds, target in (
            ("first whole-project run", end_to_end, 15.0),
            ("1 % changed, dirty items", dirty_run, 2.0),
        ):
            verdict = "met" if seconds <= target else "NOT met"
            print(f"  target {label} ≤ {target:g} s: {seconds:.2f} s, {verdict}")

        naive = naive_loop(project_id, args.slice)
        extrapolated = naive / args.slice * args.items
        items_run = dict(timings)["item aggregates, second run (replace)"]
        print(f"  naive per-item ORM loop: {naive:.2f} s for {args.slice} items → {extrapolated:,.0f} s extrapolated")
        print(f"  ratio naive / vectorised item recomputation: {extrapolated / items_run:,.0f}×")
        print(f"  ratio naive / end to end: {extrapolated / end_to_end:,.0f}×")
    finally:
        if args.keep:
            print(f"kept database {name}")
        elif created:
            _database_drop(url, name)
            print(f"dropped database {name}")
        elif project_id is not None:
            # A database the run did not create keeps everything but the benchmark's own project.
            from projects.models import Project

            Project.objects.filter(pk=project_id).delete()
            print(f"deleted the benchmark project from {name}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
