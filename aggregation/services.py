"""Recompute a project's aggregates from its judgments: load arrays once, run the figures, write the results.

The work is split by job: :mod:`aggregation.loading` reads the database into a
:class:`~aggregation.figures.judgments.Judgments` (its settings a plain
:class:`~aggregation.figures.settings.FigureSettings`),
:mod:`aggregation.figures.items`, :mod:`aggregation.figures.annotators` and :mod:`aggregation.figures.project` compute,
:mod:`aggregation.writers` writes (upserts, so a run repeated leaves the same rows). This module orders those steps
and owns the transactions; a whole-project run loads the project's judgments once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, cast

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from aggregation import loading, writers
from aggregation.designs import adaptive as adaptive_services
from aggregation.designs import figures as study_figures
from aggregation.figures.annotators import annotator_figures_compute, annotator_layout
from aggregation.figures.items import ItemFigures, item_figures_compute
from aggregation.figures.judgments import FloatArray, IntArray, Judgments, signed_preferences
from aggregation.figures.project import project_figures_compute
from aggregation.maths import ifs
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate, Provenance
from annotation.models import Annotation
from config import events, locks
from projects.models import Item, Project

logger = logging.getLogger(__name__)

#: From this many response rows on, PostgreSQL writes go through COPY and a merge (many items); fewer (a save) use
#: bulk_create.
COPY_THRESHOLD = 1000
#: Item aggregates are recomputed after a weight run only when some weight moved by more than this share of the
#: largest weight: every new label nudges leave-one-out agreement, and re-weighting a large project for a nudge
#: that cannot move any headline figure would keep the workers busy for nothing.
WEIGHT_CHANGE_TOLERANCE = 0.005
#: Connections that write a project's first run at once (PostgreSQL stores the rows of each on one core).
FIRST_RUN_CONNECTIONS = 2


def _rows_write(
    *, writer: writers.Writer, data: Judgments, figures: ItemFigures, labelled: IntArray, newest: dict[Any, Any]
) -> None:
    now = timezone.now()
    for start in range(0, labelled.size, writers.ITEM_CHUNK):
        chunk = labelled[start : start + writers.ITEM_CHUNK]
        writer.add(
            writers.item_rows(data, figures, chunk, newest, now),
            writers.response_blocks(data, figures, chunk),
            data.item_ids[chunk].tolist(),
        )
    writer.finish()


def _items_unwritten(*, project_id: int, item_ids: list[int] | None) -> bool:
    """None of these items (None: of the project's) has an item aggregate. Their response rows are checked chunk by
    chunk by the writer (``writers.PostgresCopy``), through the item_id index."""
    items = ItemAggregate.objects.filter(project_id=project_id)
    return not (items if item_ids is None else items.filter(item_id__in=item_ids)).exists()


def _first_run_chunk_write(*, data: Judgments, figures: ItemFigures, chunk: IntArray, newest: dict[Any, Any]) -> None:
    """One chunk of a first run in a transaction of its own: COPY, or the merge when rows appeared meanwhile."""
    write = partial(_rows_write, data=data, figures=figures, labelled=chunk, newest=newest)
    try:
        with transaction.atomic():
            write(writer=writers.PostgresCopy())
    except IntegrityError:
        logger.info("Project %s: aggregate rows appeared during a first run; merging a chunk", data.settings.project_id)
        with transaction.atomic():
            write(writer=writers.PostgresMerge())


def _first_run_write(*, data: Judgments, figures: ItemFigures, labelled: IntArray, newest: dict[Any, Any]) -> None:
    """A project's first run, chunk by chunk, each chunk committed on its own over FIRST_RUN_CONNECTIONS
    connections at once. Storing the rows (index entries, foreign-key checks) is the database's work on one core
    per connection, and a chunk holds the rows of whole items: a reader sees an item with all its rows or none, and
    an item without rows is what it was before the run, not computed yet (reconciliation finds it should the run
    stop midway; the next run then merges). Memory stays that of one chunk per connection."""
    chunks = [labelled[start : start + writers.ITEM_CHUNK] for start in range(0, labelled.size, writers.ITEM_CHUNK)]

    def connection_write(share: list[IntArray]) -> None:
        try:
            for chunk in share:
                _first_run_chunk_write(data=data, figures=figures, chunk=chunk, newest=newest)
        finally:
            connection.close()  # this thread's own connection

    with ThreadPoolExecutor(max_workers=FIRST_RUN_CONNECTIONS) as pool:
        shares = [chunks[k::FIRST_RUN_CONNECTIONS] for k in range(FIRST_RUN_CONNECTIONS)]
        for done in [pool.submit(connection_write, share) for share in shares if share]:
            done.result()


def _items_write(
    *,
    data: Judgments,
    weights: FloatArray,
    newest: dict[Any, Any],
    whole_project: bool,
    phases: dict[str, float],
    separate_commits: bool = False,
) -> int:
    """Compute and write the item and response aggregates of ``data``'s items, in the caller's transaction; with
    ``separate_commits`` and outside any transaction, a first run of more than one chunk goes chunk by chunk."""
    started = time.perf_counter()
    figures = item_figures_compute(data, weights)
    computed = time.perf_counter()
    labelled = np.nonzero(data.n_annotators > 0)[0]
    unlabelled = data.item_ids[data.n_annotators == 0].tolist()
    project_id = data.settings.project_id
    cells_per_item = data.response_ids.shape[1] * (data.criterion_ids.size + 1) * len(ifs.OPERATORS)
    use_copy = connection.vendor == "postgresql" and labelled.size * cells_per_item >= COPY_THRESHOLD
    write = partial(_rows_write, data=data, figures=figures, labelled=labelled, newest=newest)
    # Other connections see only committed rows: never from inside a caller's transaction.
    chunked = separate_commits and labelled.size > writers.ITEM_CHUNK and not connection.in_atomic_block
    with transaction.atomic():
        writers.stale_human_aggregates_delete(project_id=project_id, item_ids=None if whole_project else unlabelled)
        first = use_copy and _items_unwritten(
            project_id=project_id, item_ids=None if whole_project else data.item_ids[labelled].tolist()
        )
        if not first:
            write(writer=writers.PostgresMerge() if use_copy else writers.OrmWriter())
        elif not chunked:
            # A first run: nothing to merge with, so COPY straight into the tables. Should rows have appeared
            # meanwhile (a concurrent run over dirty items), the unique constraints refuse the COPY and the merge
            # writes over them instead.
            try:
                with transaction.atomic():
                    write(writer=writers.PostgresCopy())
            except IntegrityError:
                logger.info("Project %s: aggregate rows appeared during a first run; merging instead", project_id)
                write(writer=writers.PostgresMerge())
    if first and chunked:
        _first_run_write(data=data, figures=figures, labelled=labelled, newest=newest)
    phases.update(maths=computed - started, write=time.perf_counter() - computed)
    return int(labelled.size)


def item_aggregates_recompute(
    *, project_id: int, item_ids: Iterable[int] | None = None, phase_seconds: dict[str, float] | None = None
) -> int:
    """Recompute ItemAggregate and ResponseAggregate rows of a project's items (all of them when ``item_ids`` is
    None; else only those are read, computed and written) with the stored annotator weights; returns how many items
    got an aggregate.

    Rules:
    - An item with at least one annotation gets a human aggregate (provenance ``human``), replacing whatever was
      there, including a ``model_handoff`` one: human labels always win over the LLM.
    - An item without annotations is never written here. Its ``model_handoff`` aggregate (the handoff service
      writes those while the project is handed off) is left alone; a stale ``human`` aggregate (its annotations
      were deleted) is removed with its response rows.
    - ResponseAggregate rows are written for IFS judgments only, for every operator, per criterion and overall
      (criterion NULL); the ItemAggregate headline uses the project's operator.

    ``phase_seconds``, when given, receives the time spent reading, computing and writing (for benchmarks).
    """
    with transaction.atomic():
        # Shared with other item batches, exclusive against a project run's weights and items: the weights read
        # below are still the newest when this batch commits (config.locks.PROJECT_WEIGHTS).
        locks.advisory_xact_lock_shared(namespace=locks.PROJECT_WEIGHTS, key=int(project_id))
        project = Project.objects.get(pk=project_id)
        wanted = None if item_ids is None else sorted({int(i) for i in item_ids})
        started = time.perf_counter()
        # The newest timestamps first: an annotation saved while we compute is then newer than what we record, and
        # reconciliation picks it up.
        newest = loading.newest_annotation_by_item(project.pk, wanted)
        data = loading.judgments_load(project=project, item_ids=wanted)
        weights = loading.stored_weights(project.pk, data.annotator_ids)
        phases = {"read": time.perf_counter() - started}
        done = _items_write(data=data, weights=weights, newest=newest, whole_project=wanted is None, phases=phases)
    if phase_seconds is not None:
        phase_seconds.update(phases)
    return done


def _weights_moved(before: dict[int, float], after: dict[int, float]) -> bool:
    if before.keys() != after.keys():
        return True
    if not after:
        return False
    largest = max(max(after.values()), 1e-12)
    return any(abs(before[a] - after[a]) > WEIGHT_CHANGE_TOLERANCE * largest for a in after)


def _annotators_write(*, data: Judgments) -> tuple[bool, FloatArray]:
    """Write every annotator's figures; returns whether the weights moved and the new weights (annotator order)."""
    project_id = data.settings.project_id
    before = dict(AnnotatorAggregate.objects.filter(project_id=project_id).values_list("annotator_id", "weight"))
    figures = None
    if data.annotator_ids.size:
        project = Project.objects.get(pk=project_id)
        layout = annotator_layout(data)
        repeats = study_figures.repeat_layout(project=project, data=data, shape=layout[0].shape)
        figures = annotator_figures_compute(data, repeats=repeats)
        study_figures.study_figures_recompute(
            project=project, data=data, layout=layout[:3], repeats=repeats, signed=signed_preferences(data)
        )
    after = writers.annotator_aggregates_write(data=data, figures=figures, now=timezone.now())
    weights = figures.weight if figures is not None else np.ones(0)
    return _weights_moved(before, after), weights


def annotator_aggregates_recompute(*, project_id: int) -> bool:
    """Recompute every annotator's weight (paper Eq. 8 with the project's coefficients), its parts, the iterative
    consensus weight and working figures (aggregation.figures.annotators); returns True when the weights moved (an
    annotator appeared or left, or a weight changed by more than WEIGHT_CHANGE_TOLERANCE of the largest)."""
    with transaction.atomic():
        project = Project.objects.get(pk=project_id)
        return _annotators_write(data=loading.judgments_load(project=project))[0]


def _project_write(*, data: Judgments, newest: Any, stamp: bool = True) -> None:
    agreement, plots, progress = project_figures_compute(data)
    writers.project_aggregate_write(
        settings=data.settings,
        agreement=agreement,
        plots=plots,
        progress=progress,
        newest=newest,
        now=timezone.now(),
        stamp=stamp,
    )


def _stale_item_ids(project_id: int) -> list[int]:
    """This project's items whose aggregate has not counted their newest label or the settings (stale_items_list)."""
    return list(_stale_items(Item.objects.filter(project_id=project_id)).values_list("pk", flat=True))


def _fresh_stamp(*, project_id: int, newest: Any, settings_version: int) -> None:
    """The run's last write: every block of the project's figures has counted the labels up to ``newest`` and the
    settings of ``settings_version`` (aggregation.selectors.figures_staleness reads it)."""
    ProjectAggregate.objects.filter(project_id=project_id).update(
        source_updated_at=newest, settings_version=settings_version
    )


def project_agreement_recompute(*, project_id: int) -> ProjectAggregate:
    """Write ProjectAggregate.agreement, .plots and .progress (aggregation.figures.project says what they hold)."""
    with transaction.atomic():
        project = Project.objects.get(pk=project_id)
        newest = loading.newest_annotation(project.pk)
        _project_write(data=loading.judgments_load(project=project), newest=newest)
    return cast(ProjectAggregate, ProjectAggregate.objects.get(project_id=project.pk))


def _items_behind_settings(project_id: int) -> bool:
    """Some human item aggregate was computed before the project's last figure-relevant settings change."""
    behind = Project.objects.filter(pk=project_id).values("settings_version")[:1]
    return ItemAggregate.objects.filter(
        project_id=project_id, provenance=Provenance.HUMAN, settings_version__lt=Subquery(behind)
    ).exists()


def project_aggregates_recompute(*, project_id: int) -> dict[str, Any]:
    """The project-level run, in order: annotator weights; every item aggregate if the weights moved or a setting
    changed since they were computed (Project.settings_version); agreement, plots and progress; then the suggestion
    figures and the handoff evaluation (the suggestions app's, reached through events.figures_recomputed).

    The judgments are loaded once and serve all three steps. Each step commits on its own, so a failure later
    leaves the earlier figures written; a first run of a large project commits its items a chunk at a time
    (``_first_run_write``). Returns what it did."""
    project = Project.objects.get(pk=project_id)
    # Timestamps before the judgments: an annotation saved meanwhile is newer than what is recorded, so
    # reconciliation picks it up.
    newest_by_item = loading.newest_annotation_by_item(project.pk, None)
    newest = loading.newest_annotation(project.pk)
    data = loading.judgments_load(project=project)
    items = 0
    # From the new weights to the last item rewritten with them, no item batch reads or writes (config.locks).
    with locks.advisory_lock(namespace=locks.PROJECT_WEIGHTS, key=project_id):
        with transaction.atomic():
            moved, weights = _annotators_write(data=data)
        if moved or _items_behind_settings(project_id):
            items = _items_write(
                data=data, weights=weights, newest=newest_by_item, whole_project=True, phases={}, separate_commits=True
            )
    with transaction.atomic():
        # Not stamped fresh yet: the suggestion, handoff and labelling figures below still count the old labels.
        _project_write(data=data, newest=newest, stamp=False)
    adaptive_services.adaptive_overlap_plan(project_id=project_id)
    # After the agreement: the suggestion figures (connected by the suggestions app) put the human-human ceiling
    # beside the model's agreement, then the handoff rule reads them.
    events.figures_recomputed(project_id=project_id)
    # An item batch that read its labels before this run's items were written may have left an item behind (or the
    # run rewrote an item from labels older than the batch's): found and redone before the figures say fresh.
    redone = _stale_item_ids(project_id)
    if redone:
        item_aggregates_recompute(project_id=project_id, item_ids=redone)
    _fresh_stamp(project_id=project_id, newest=newest, settings_version=data.settings.settings_version)
    return {"weights_moved": moved, "items": items, "items_redone": len(redone), "suggestion_figures": True,
            "handoff": True}  # fmt: skip


def project_aggregates_recompute_exclusive(*, project_id: int) -> dict[str, Any] | None:
    """``project_aggregates_recompute`` unless another process is running it for this project (None then).

    Two workers running one project at once would both write its figures from different snapshots, the slower
    one last; the background tasks go through here. Start and end are logged: the multi-process test reads them."""
    with locks.advisory_lock_try(namespace=locks.PROJECT_RECOMPUTE, key=project_id) as acquired:
        if not acquired:
            return None
        logger.info("Project %s: recompute started", project_id)
        try:
            return project_aggregates_recompute(project_id=project_id)
        finally:
            logger.info("Project %s: recompute finished", project_id)


def _stale_items(items: QuerySet[Item]) -> QuerySet[Item]:
    """Those of ``items`` whose newest annotation is newer than their aggregate, or that have annotations but no
    aggregate, or whose human aggregate predates a settings change; in (project, item) order."""
    newest = Annotation.objects.filter(item_id=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    return (
        items.annotate(newest=Subquery(newest))
        .filter(newest__isnull=False)
        .filter(
            Q(aggregate__isnull=True)
            | Q(aggregate__source_updated_at__isnull=True)
            | Q(aggregate__source_updated_at__lt=F("newest"))
            | Q(aggregate__provenance=Provenance.HUMAN, aggregate__settings_version__lt=F("project__settings_version"))
        )
        .order_by("project_id", "pk")
    )


def stale_items_list(*, limit: int | None = None) -> dict[int, list[int]]:
    """Items whose newest annotation is newer than their aggregate, or that have annotations but no aggregate,
    grouped by project id. Reads one indexed subquery per item (annotation (item, updated_at) index)."""
    stale = _stale_items(Item.objects.all()).values_list("project_id", "pk")
    if limit is not None:
        stale = stale[:limit]
    found: dict[int, list[int]] = {}
    for project_id, item_id in stale:
        found.setdefault(project_id, []).append(item_id)
    return found


def stale_projects_list() -> list[int]:
    """Projects with annotations whose ProjectAggregate is missing or older than their newest annotation, and
    projects whose figures were computed before their last figure-relevant settings change."""
    newest = Annotation.objects.filter(project_id=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    return list(
        Project.objects.annotate(newest=Subquery(newest))
        .filter(
            Q(newest__isnull=False, aggregate__isnull=True)
            | Q(newest__isnull=False, aggregate__source_updated_at__isnull=True)
            | Q(newest__isnull=False, aggregate__source_updated_at__lt=F("newest"))
            | Q(aggregate__settings_version__lt=F("settings_version"))
            | Q(aggregate__suggestions_settings_version__lt=F("settings_version"))
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
