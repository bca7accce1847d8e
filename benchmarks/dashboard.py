"""Dashboard cost at 1,000 vs 100,000 items: queries per render and median render time, side by side.

Builds two projects with stored aggregates (bulk_create, as the aggregation tasks would leave them) on a dedicated
PostgreSQL database, then renders the dashboard page and its HTMX fragment with the test Client many times.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/penumbra_bench_dash python benchmarks/dashboard.py
    options: --sizes 1000 100000  --renders 30  --keep (reuse projects already built)

The database is created and migrated when missing. Without DATABASE_URL the script refuses: SQLite figures say
nothing about production.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Plain HTTP on loopback: the production settings would redirect every request to https.
os.environ.setdefault("PENUMBRA_HTTPS", "0")


def _ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parsed = __import__("urllib.parse", fromlist=["urlparse"]).urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def build_project(*, n_items: int, n_annotators: int = 8, name: str | None = None, lead_username: str = "bench-lead"):
    """A project with ``n_items`` items (two responses each) and every aggregate the dashboard reads.

    The figures are synthetic but shaped like the aggregation service's output, so the page does its real work.
    """
    import random
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate
    from projects.models import Criterion, Item, Membership, Project, Response, Suggestion

    rng = random.Random(n_items)
    now = timezone.now()
    user_model = get_user_model()
    lead, created = user_model.objects.get_or_create(username=lead_username)
    if created:
        lead.set_password("bench-password")
        lead.save()
    project = Project.objects.create(
        name=name or f"Benchmark {n_items:,} items",
        slug=f"bench-{n_items}-{rng.randrange(10**9)}",
        labelling_started_at=now - timedelta(days=7),
    )
    Criterion.objects.bulk_create(
        [
            Criterion(project=project, name="helpfulness", weight=0.5, position=0),
            Criterion(project=project, name="accuracy", weight=0.3, position=1),
            Criterion(project=project, name="safety", weight=0.2, position=2),
        ]
    )
    annotators = []
    for index in range(n_annotators):
        user, _ = user_model.objects.get_or_create(username=f"annotator-{index + 1:02d}")
        annotators.append(user)
    Membership.objects.bulk_create(
        [Membership(project=project, user=lead, role=Membership.Role.LEAD)]
        + [Membership(project=project, user=user, role=Membership.Role.ANNOTATOR) for user in annotators]
    )

    batch = 5000
    for start in range(0, n_items, batch):
        stop = min(start + batch, n_items)
        items = Item.objects.bulk_create(
            [
                Item(
                    project=project,
                    external_id=f"item-{i:06d}",
                    prompt=f"Prompt {i}: which answer explains it better?",
                    blind_draw=rng.random(),
                    queue_key=rng.random(),
                    is_blind=rng.random() < 0.2,
                    annotation_count=3,
                )
                for i in range(start, stop)
            ]
        )
        Response.objects.bulk_create(
            [
                Response(item=item, position=p, text=f"Answer {p} to {item.external_id}.")
                for item in items
                for p in (0, 1)
            ]
        )
        Suggestion.objects.bulk_create(
            [
                Suggestion(item=item, preferred_position=rng.choice((0, 1, 1, -1)), model_name="bench-llm")
                for item in items
            ]
        )
        aggregates = []
        for item in items:
            hesitation = min(max(rng.betavariate(2, 6), 0.0), 1.0)
            agreement = min(max(rng.betavariate(6, 2), 0.0), 1.0)
            margin = rng.uniform(-1, 1)
            aggregates.append(
                ItemAggregate(
                    project=project,
                    item=item,
                    operator=project.aggregation_operator,
                    best_position=0 if margin >= 0 else 1,
                    worst_position=1 if margin >= 0 else 0,
                    p_best=0.5 + abs(margin) / 4,
                    margin=abs(margin),
                    hesitation=hesitation,
                    agreement=agreement,
                    signed_preference=margin / 2,
                    n_annotators=3,
                    source_updated_at=now,
                    computed_at=now,
                )
            )
        ItemAggregate.objects.bulk_create(aggregates)

    def estimate(value: float, n: int, half: float) -> dict:
        return {"value": value, "n": n, "ci": [max(-1.0, value - half), min(1.0, value + half)]}

    AnnotatorAggregate.objects.bulk_create(
        [
            AnnotatorAggregate(
                project=project,
                annotator=user,
                weight=(w := rng.uniform(0.05, 0.25)),
                consistency=rng.uniform(0.5, 0.95),
                expertise=rng.uniform(0.4, 0.95),
                agreement=rng.uniform(0.5, 0.9),
                consensus_weight=w * rng.uniform(0.8, 1.2),
                n_labels=3 * n_items // n_annotators,
                median_time_ms=rng.randint(9_000, 60_000),
                mean_hesitation=rng.uniform(0.1, 0.4),
                blind_agreement=rng.uniform(0.55, 0.9),
                blind_n=rng.randint(5, 200),
                computed_at=now,
            )
            for user in annotators
        ]
    )
    edges = [round(i / 20, 2) for i in range(21)]
    hesitation = {
        "bins": edges,
        "criteria": [
            {
                "criterion_id": criterion.pk,
                "name": criterion.name,
                "counts": [int(n_items * (k + 1) * (20 - k) / 1540 * 3 * (1 + 0.3 * c)) for k in range(20)],
                "n": n_items * 6,
            }
            for c, criterion in enumerate(project.criteria.all())
        ],
    }
    over_time = [
        {
            "date": (now - timedelta(days=13 - d)).date().isoformat(),
            "n_labels": 100 * (d + 1),
            "pairwise_with_ties": 0.55 + d * 0.015 + rng.uniform(-0.02, 0.02),
            "alpha_interval": 0.35 + d * 0.02 + rng.uniform(-0.03, 0.03),
            "ifs": 0.7 + d * 0.01,
        }
        for d in range(14)
    ]
    done = int(n_items * 0.62)
    ProjectAggregate.objects.create(
        project=project,
        agreement={
            "pairwise_with_ties": estimate(0.71, n_items * 3, 0.02),
            "pairwise_without_ties": estimate(0.78, int(n_items * 2.4), 0.02),
            "alpha_interval": estimate(0.54, n_items * 3, 0.03),
            "alpha_nominal": estimate(0.47, n_items * 3, 0.03),
            "ifs": estimate(0.82, n_items, 0.01),
        },
        suggestions={
            "blind": {"agreement": estimate(0.74, 412, 0.04)},
            "shown": {"agreement": estimate(0.86, 1630, 0.02)},
            "anchoring_gap": {**estimate(0.12, 412, 0.05), "needed": {"blind": 5, "shown": 5}},
            "accept": {"count": 211, "rate": 0.13},
            "human_human": {"blind": estimate(0.71, 1200, 0.03), "shown": estimate(0.74, 4100, 0.02)},
            "handoff": {
                "eligible": False,
                "rule": "point",
                "rule_text": "blind agreement ≥ 0.9",
                "threshold": 0.9,
                "minimum": 20,
                "measured": 0.74,
                "explanation": "Not eligible: blind agreement 0.740 is below the threshold 0.9.",
            },
        },
        plots={"hesitation": hesitation, "agreement_over_time": over_time, "weights": []},
        progress={
            "items_total": n_items,
            "items_done": done,
            "labels_needed": n_items * 3,
            "labels_done": done * 3 + n_items // 7,
            "annotators": [
                {
                    "annotator_id": user.pk,
                    "username": user.get_username(),
                    "labels": 3 * done // n_annotators - 37 * i,
                    "skipped": i % 3,
                }
                for i, user in enumerate(annotators)
            ],
        },
        computed_at=now,
        agreement_computed_at=now,
        suggestions_computed_at=now,
    )
    return project, lead


slowest: dict[int, list[tuple[float, str]]] = {}


def measure(*, project, lead, renders: int) -> dict[str, float]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    client = Client()
    client.force_login(lead)
    url = reverse("dashboard", kwargs={"project_id": project.pk})
    results: dict[str, float] = {}
    for label, headers in (("page", {}), ("fragment", {"HTTP_HX_REQUEST": "true"})):
        client.get(url, **headers)  # warm caches and connections
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url, **headers)
        assert response.status_code == 200, response.status_code
        # Read now: every request start empties the connection's query log.
        queries = [(float(q["time"]) * 1000, q["sql"]) for q in captured.captured_queries]
        timings = []
        for _ in range(renders):
            started = time.perf_counter()
            client.get(url, **headers)
            timings.append((time.perf_counter() - started) * 1000)
        results[f"{label}_queries"] = len(queries)
        results[f"{label}_sql_ms"] = sum(ms for ms, _ in queries)
        if label == "page":
            slowest[project.pk] = sorted(queries, reverse=True)[:3]
        results[f"{label}_median_ms"] = statistics.median(timings)
        results[f"{label}_p95_ms"] = sorted(timings)[max(0, int(len(timings) * 0.95) - 1)]
        results[f"{label}_bytes"] = len(response.content)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 100_000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--renders", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="reuse benchmark projects of the same sizes if present")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a dedicated PostgreSQL database, e.g. .../penumbra_bench_dash")
    _ensure_database(url)

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0)

    from django.contrib.auth import get_user_model

    from projects.models import Project

    rows = []
    for size in args.sizes:
        name = f"Benchmark {size:,} items"
        existing = Project.objects.filter(name=name).order_by("-id").first() if args.keep else None
        if existing is None:
            Project.objects.filter(name=name).delete()
            started = time.perf_counter()
            project, lead = build_project(n_items=size, name=name)
            print(f"built {size:>7,} items with aggregates in {time.perf_counter() - started:6.1f} s", flush=True)
        else:
            project, lead = existing, get_user_model().objects.get(username="bench-lead")
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        rows.append((size, measure(project=project, lead=lead, renders=args.renders)))
        large_project = project

    (small, a), (large, b) = rows
    print()
    print(f"Dashboard of a lead, {args.renders} renders each, test Client against PostgreSQL")
    print(f"{'':32}{f'{small:,} items':>16}{f'{large:,} items':>16}{'ratio':>9}")
    for key, label, digits in (
        ("page_queries", "queries, page", 0),
        ("fragment_queries", "queries, HTMX fragment", 0),
        ("page_sql_ms", "time in SQL, page (ms)", 1),
        ("page_median_ms", "median render, page (ms)", 1),
        ("page_p95_ms", "p95 render, page (ms)", 1),
        ("fragment_median_ms", "median render, fragment (ms)", 1),
        ("page_bytes", "page size (bytes)", 0),
    ):
        ratio = b[key] / a[key] if a[key] else float("nan")
        print(f"{label:32}{a[key]:>16,.{digits}f}{b[key]:>16,.{digits}f}{ratio:>9.2f}")
    print()
    print(f"Slowest queries of one page render at {large:,} items:")
    for ms, statement in slowest[large_project.pk]:
        print(f"  {ms:7.1f} ms  {statement[:110]}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine_load import load_reported

    with load_reported():
        main()
