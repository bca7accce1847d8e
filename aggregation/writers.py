"""Database writes of the aggregates: item and response rows (ORM for a few items, COPY and a set-based merge for
many, COPY alone for items without rows yet), annotator rows and the project row. Every write is an upsert (or
falls back to one), so running a recompute twice leaves the same rows (idempotent) and any number of workers may
run it. COPY goes through :mod:`config.bulk` (rows of items as text, response values by column in the binary
format)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from django.db import IntegrityError, connection
from django.db.models import Exists, OuterRef

from aggregation.figures.annotators import AnnotatorFigures
from aggregation.figures.items import ItemFigures, position_or_none
from aggregation.figures.judgments import IntArray, Judgments, optional
from aggregation.figures.settings import FigureSettings
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.models import Annotation
from config.bulk import Column, copy_binary, copy_rows

#: Rows per INSERT statement, and items per chunk of built model instances (memory stays flat on big projects).
BATCH_SIZE = 2000
ITEM_CHUNK = 5000
#: Up to this many incoming items the merge lets the planner use the indexes (a run over the dirty items); above
#: it, hash joins only (a whole project: a nested loop on stale statistics would rescan the target per row).
INDEXED_MERGE_ITEMS = 20_000

RESPONSE_COLUMNS = ("item_id", "response_id", "criterion_id", "operator", "mu", "nu")
ITEM_COLUMNS = (
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
    "vote_tie",
    "n_annotators",
    "source_updated_at",
    "settings_version",
    "computed_at",
)


def response_blocks(data: Judgments, figures: ItemFigures, items: IntArray) -> list[list[Column]]:
    """Rows (RESPONSE_COLUMNS) for the item indices ``items`` by column, one block per operator and criterion
    (each criterion, then overall): arrays for the ids and values, the criterion and operator one value each."""
    blocks: list[list[Column]] = []
    response_ids = data.response_ids[items]
    item_pks = data.item_ids[items]
    for operator, (per_criterion, overall) in figures.by_operator.items():
        for c, criterion_id in enumerate([*data.criterion_ids.tolist(), None]):
            if criterion_id is None:
                mu, nu = overall.mu[items], overall.nu[items]
            else:
                mu, nu = per_criterion.mu[items, :, c], per_criterion.nu[items, :, c]
            keep = (response_ids > 0) & np.isfinite(mu) & np.isfinite(nu)
            i, r = np.nonzero(keep)
            mu_k = np.clip(mu[i, r], 0.0, 1.0)
            nu_k = np.clip(np.minimum(nu[i, r], 1.0 - mu_k), 0.0, 1.0)
            blocks.append([item_pks[i], response_ids[i, r], criterion_id, operator, mu_k, nu_k])
    return blocks


def response_rows(blocks: list[list[Column]]) -> list[tuple[Any, ...]]:
    """The rows of ``response_blocks`` one by one (RESPONSE_COLUMNS), for the ORM."""
    rows: list[tuple[Any, ...]] = []
    for item_pks, response_ids, criterion_id, operator, mu, nu in blocks:
        rows.extend(
            (item_id, response_id, criterion_id, operator, m, n)
            for item_id, response_id, m, n in zip(
                *(np.asarray(column).tolist() for column in (item_pks, response_ids, mu, nu)), strict=True
            )
        )
    return rows


def item_rows(
    data: Judgments,
    figures: ItemFigures,
    items: IntArray,
    newest: Mapping[int, dt.datetime],
    now: dt.datetime,
) -> list[tuple[Any, ...]]:
    """Rows (ITEM_COLUMNS) of human aggregates for the item indices ``items``."""
    settings = data.settings
    return [
        (
            settings.project_id,
            item_id,
            Provenance.HUMAN.value,
            settings.aggregation_operator,
            position_or_none(best),
            position_or_none(worst),
            optional(p_best),
            optional(margin),
            optional(hesitation),
            optional(agreement),
            optional(signed),
            vote_tie,
            count,
            newest.get(item_id),
            settings.settings_version,
            now,
        )
        for item_id, best, worst, p_best, margin, hesitation, agreement, signed, vote_tie, count in zip(
            data.item_ids[items].tolist(),
            figures.best[items].tolist(),
            figures.worst[items].tolist(),
            figures.p_best[items].tolist(),
            figures.margin[items].tolist(),
            figures.hesitation[items].tolist(),
            figures.agreement[items].tolist(),
            figures.signed_preference[items].tolist(),
            figures.vote_tie[items].tolist(),
            data.n_annotators[items].tolist(),
            strict=True,
        )
    ]


class Writer(Protocol):
    """Writes item and response rows chunk by chunk (``add``), then whatever is left (``finish``)."""

    def add(self, item_rows: list[tuple[Any, ...]], responses: list[list[Column]], item_ids: list[int]) -> None: ...

    def finish(self) -> None: ...


class OrmWriter:
    """Writes each chunk at once with the ORM: bulk_create(update_conflicts=True) for items; for response rows,
    which ON CONFLICT cannot target (two partial unique constraints: per criterion, and overall with criterion
    NULL), the chunk's rows are replaced (delete, insert) inside the caller's transaction. Any database."""

    def add(self, item_rows: list[tuple[Any, ...]], responses: list[list[Column]], item_ids: list[int]) -> None:
        ItemAggregate.objects.bulk_create(
            [ItemAggregate(**dict(zip(ITEM_COLUMNS, row, strict=True))) for row in item_rows],
            batch_size=BATCH_SIZE,
            update_conflicts=True,
            unique_fields=["item"],
            update_fields=[c.removesuffix("_id") for c in ITEM_COLUMNS if c != "item_id"],
        )
        ResponseAggregate.objects.filter(item_id__in=item_ids).delete()
        ResponseAggregate.objects.bulk_create(
            [
                ResponseAggregate(item_id=i, response_id=r, criterion_id=c, operator=o, mu=m, nu=n)
                for i, r, c, o, m, n in response_rows(responses)
            ],
            batch_size=BATCH_SIZE,
        )

    def finish(self) -> None:
        return None


class RowsPresent(IntegrityError):
    """A first-run chunk found rows already there: the caller merges it instead."""


class PostgresCopy:
    """Writes of items that have no aggregate rows yet (a project's first run) on PostgreSQL: every chunk is COPied
    straight into the target tables, with no staging and no merge. The caller checks that none of the items has an
    item aggregate and runs this inside a savepoint: a row already there (a concurrent writer got in first, or a
    response row without its item aggregate) is a unique violation, and the caller then rolls back to the savepoint
    and merges instead. The unique constraints, not the check, keep a cell from being written twice."""

    def add(self, item_rows: list[tuple[Any, ...]], responses: list[list[Column]], item_ids: list[int]) -> None:
        # A response row with no item aggregate (none should exist) would not conflict with the new cells, and the
        # merge would have deleted it: refuse such a chunk too.
        if ResponseAggregate.objects.filter(item_id__in=item_ids).exists():
            raise RowsPresent(f"response aggregates of {len(item_ids)} items already there")
        copy_rows(ItemAggregate._meta.db_table, ITEM_COLUMNS, item_rows)
        copy_binary(ResponseAggregate._meta.db_table, RESPONSE_COLUMNS, responses)

    def finish(self) -> None:
        return None


class PostgresMerge:
    """Writes of many items on PostgreSQL: chunks are COPied into temporary tables, then merged in a few
    set-based statements. Items: INSERT … ON CONFLICT (item_id) DO UPDATE. Response rows: cells that vanished are
    deleted, changed values updated, new cells inserted; unchanged rows are not written at all, so recomputing a
    project after a small weight change touches little. Same result as OrmWriter, an order of magnitude faster."""

    def __init__(self) -> None:
        self.n_items = 0
        self.item_ids: list[int] = []
        item_columns = ", ".join(f'"{c}"' for c in ITEM_COLUMNS)
        response_columns = ", ".join(f'"{c}"' for c in RESPONSE_COLUMNS)
        with connection.cursor() as cursor:
            for name in ("item_aggregate_incoming", "response_aggregate_incoming"):
                cursor.execute(f"DROP TABLE IF EXISTS pg_temp.{name}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE item_aggregate_incoming ON COMMIT DROP AS SELECT {item_columns} "
                f'FROM "{ItemAggregate._meta.db_table}" WITH NO DATA'
            )
            cursor.execute(
                f"CREATE TEMPORARY TABLE response_aggregate_incoming ON COMMIT DROP AS SELECT {response_columns} "
                f'FROM "{ResponseAggregate._meta.db_table}" WITH NO DATA'
            )

    def add(self, item_rows: list[tuple[Any, ...]], responses: list[list[Column]], item_ids: list[int]) -> None:
        self.n_items += len(item_ids)
        if self.n_items <= INDEXED_MERGE_ITEMS:
            self.item_ids.extend(item_ids)
        copy_rows("item_aggregate_incoming", ITEM_COLUMNS, item_rows)
        copy_binary("response_aggregate_incoming", RESPONSE_COLUMNS, responses)

    def finish(self) -> None:
        items = ItemAggregate._meta.db_table
        responses = ResponseAggregate._meta.db_table
        item_columns = ", ".join(f'"{c}"' for c in ITEM_COLUMNS)
        response_columns = ", ".join(f'"{c}"' for c in RESPONSE_COLUMNS)
        updates = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in ITEM_COLUMNS if c != "item_id")
        # Equality on COALESCE keeps the joins hashable (an OR of NULL cases would make them nested loops).
        same_cell = (
            "a.response_id = t.response_id AND a.operator = t.operator "
            "AND COALESCE(a.criterion_id, 0) = COALESCE(t.criterion_id, 0)"
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE item_aggregate_incoming")
            cursor.execute("ANALYZE response_aggregate_incoming")
            # On a whole project every join here is between large sets; a nested loop (chosen on stale statistics,
            # e.g. a table analysed while empty) would rescan the target per row: hash joins only, for this
            # transaction. On the dirty items of a run after saves the planner, costing random reads high, read all
            # 1.2 M response rows of a large project in each statement to change 12,000 (1.5-2.4 s each): there the
            # target is restricted to the incoming items' rows by their item_id index (response rows never move
            # between items), and the joins are between small sets.
            whole = self.n_items > INDEXED_MERGE_ITEMS
            only, params = ("", None) if whole else ("AND a.item_id = ANY(%s)", [self.item_ids])
            if whole:
                cursor.execute("SET LOCAL enable_nestloop = off")
            cursor.execute(
                f'INSERT INTO "{items}" ({item_columns}) SELECT {item_columns} FROM item_aggregate_incoming '
                f'ON CONFLICT ("item_id") DO UPDATE SET {updates}'
            )
            cursor.execute(
                f'DELETE FROM "{responses}" a USING item_aggregate_incoming i WHERE a.item_id = i.item_id {only} '
                f"AND NOT EXISTS (SELECT 1 FROM response_aggregate_incoming t WHERE {same_cell})",
                params,
            )
            cursor.execute(
                f'UPDATE "{responses}" a SET mu = t.mu, nu = t.nu, item_id = t.item_id '
                f"FROM response_aggregate_incoming t WHERE {same_cell} {only} "
                "AND (a.mu, a.nu, a.item_id) IS DISTINCT FROM (t.mu, t.nu, t.item_id)",
                params,
            )
            # New cells are found before any is inserted: an anti-join against the table being filled would
            # scan the fresh pages again for every row.
            cursor.execute("DROP TABLE IF EXISTS pg_temp.response_aggregate_new")
            cursor.execute(
                f"CREATE TEMPORARY TABLE response_aggregate_new ON COMMIT DROP AS SELECT {response_columns} "
                "FROM response_aggregate_incoming t "
                f'WHERE NOT EXISTS (SELECT 1 FROM "{responses}" a WHERE {same_cell} {only})',
                params,
            )
            # ON CONFLICT covers a concurrent writer that inserted the same cell meanwhile.
            cursor.execute(
                f'INSERT INTO "{responses}" ({response_columns}) SELECT {response_columns} '
                "FROM response_aggregate_new ON CONFLICT DO NOTHING"
            )
            if whole:
                cursor.execute("RESET enable_nestloop")
            cursor.execute("DROP TABLE pg_temp.response_aggregate_new")
            cursor.execute("DROP TABLE pg_temp.item_aggregate_incoming")
            cursor.execute("DROP TABLE pg_temp.response_aggregate_incoming")


def stale_human_aggregates_delete(*, project_id: int, item_ids: list[int] | None) -> None:
    """Remove human aggregates of items that no longer have any annotation (None: look over the whole project)."""
    if item_ids is not None and not item_ids:
        return
    has_annotation = Exists(Annotation.objects.filter(item_id=OuterRef("item_id")))
    stale = ItemAggregate.objects.filter(project_id=project_id, provenance=Provenance.HUMAN).exclude(has_annotation)
    orphans = ResponseAggregate.objects.filter(item__project_id=project_id).exclude(has_annotation)
    orphans = orphans.exclude(item__aggregate__provenance=Provenance.MODEL_HANDOFF)
    if item_ids is not None:
        stale = stale.filter(item_id__in=item_ids)
        orphans = orphans.filter(item_id__in=item_ids)
    orphans.delete()
    stale.delete()


def _milliseconds(x: float) -> int | None:
    return round(float(x)) if np.isfinite(x) else None


def annotator_aggregates_write(
    *, data: Judgments, figures: AnnotatorFigures | None, now: dt.datetime
) -> dict[int, float]:
    """Upsert every annotator's row (``figures`` None: the project has none, so all rows go); returns the new
    weights by annotator id. The suggestion figures' columns (blind_agreement, blind_n) are never written here."""
    settings = data.settings
    if figures is None:
        AnnotatorAggregate.objects.filter(project_id=settings.project_id).delete()
        return {}
    rows = [
        AnnotatorAggregate(
            project_id=settings.project_id,
            annotator_id=int(data.annotator_ids[a]),
            weight=float(figures.weight[a]),
            consistency=optional(figures.consistency[a]),
            expertise=optional(figures.expertise[a]),
            expertise_n=int(figures.n_gold[a]),
            agreement=optional(figures.agreement[a]),
            consensus_weight=optional(figures.consensus_weight[a]),
            n_labels=int(figures.n_labels[a]),
            median_time_ms=None
            if not np.isfinite(figures.median_time_ms[a])
            else round(float(figures.median_time_ms[a])),
            mean_hesitation=optional(figures.mean_hesitation[a]),
            settings_version=settings.settings_version,
            computed_at=now,
        )
        for a in range(data.annotator_ids.size)
    ]
    # Rows in annotator order: the suggestion figures lock the same rows in that order, so the two never deadlock.
    AnnotatorAggregate.objects.bulk_create(
        rows,
        batch_size=BATCH_SIZE,
        update_conflicts=True,
        unique_fields=["project", "annotator"],
        update_fields=[
            "weight",
            "consistency",
            "expertise",
            "expertise_n",
            "agreement",
            "consensus_weight",
            "n_labels",
            "median_time_ms",
            "mean_hesitation",
            "settings_version",
            "computed_at",
        ],
    )
    AnnotatorAggregate.objects.filter(project_id=settings.project_id).exclude(
        annotator_id__in=data.annotator_ids.tolist()
    ).delete()
    return {int(a): float(w) for a, w in zip(data.annotator_ids.tolist(), figures.weight.tolist(), strict=True)}


def project_aggregate_write(
    *,
    settings: FigureSettings,
    agreement: dict[str, Any],
    plots: dict[str, Any],
    progress: dict[str, Any],
    newest: dt.datetime | None,
    now: dt.datetime,
    stamp: bool = True,
) -> None:
    """Upsert ProjectAggregate.agreement, .plots and .progress (never .suggestions, which has its own writer).

    ``stamp``: also record the labels (``newest``) and settings version these figures counted, the freshness the
    stats API reports. A whole project run passes False and stamps last, once every block has counted them."""
    aggregate = ProjectAggregate(
        project_id=settings.project_id,
        agreement=agreement,
        plots=plots,
        progress=progress,
        # A first row not stamped says "not computed yet" until the run stamps it.
        source_updated_at=newest if stamp else None,
        settings_version=settings.settings_version if stamp else 0,
        agreement_computed_at=now,
        computed_at=now,
    )
    ProjectAggregate.objects.bulk_create(
        [aggregate],
        update_conflicts=True,
        unique_fields=["project"],
        update_fields=[
            "agreement",
            "plots",
            "progress",
            *(("source_updated_at", "settings_version") if stamp else ()),
            "agreement_computed_at",
            "computed_at",
        ],
    )
