"""An item batch computed with old weights can never land after the project run that wrote new ones: while a run
holds the project's weights (from writing them until every item is rewritten with them) an item batch waits before
it reads the weights, and once the run lets go it reads the new ones. Batches of one project never wait for each
other."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection

from aggregation.models import AnnotatorAggregate, ItemAggregate
from aggregation.services import annotator_aggregates_recompute, item_aggregates_recompute
from config import locks
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.processes import worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _waiting_for_weights(conninfo: str, project_id: int) -> bool:
    """Some session waits for the weights lock of this project (pg_locks: an advisory lock not granted)."""
    with psycopg.connect(conninfo, autocommit=True) as other:
        row = other.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = %s AND objid = %s",
            [locks.PROJECT_WEIGHTS, project_id],
        ).fetchone()
    return bool(row and row[0])


def _run_in_thread(target, failures: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            target()
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_item_batch_waits_for_the_run_and_reads_its_new_weights() -> None:
    project, items, annotators = project_make(n_items=2, n_annotators=3)
    for item in items:
        for k, annotator in enumerate(annotators):
            annotate_ifs(item, annotator, [(600 + 100 * k, 200), (200, 500)])
    annotator_aggregates_recompute(project_id=project.pk)
    conninfo = worker_database_url()
    failures: list[BaseException] = []

    # The run's side, on a connection of its own: hold the weights and write new ones.
    holder = psycopg.connect(conninfo, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s, %s)", [locks.PROJECT_WEIGHTS, project.pk])
    batch = _run_in_thread(lambda: item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk]), failures)
    try:
        deadline = time.monotonic() + 20
        while not _waiting_for_weights(conninfo, project.pk) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting_for_weights(conninfo, project.pk), "the item batch did not wait for the weights"
        assert not ItemAggregate.objects.filter(item=items[0]).exists(), "nothing written while the run holds them"
        # The run writes new weights (one annotator counted ten times more) before it lets go.
        table = AnnotatorAggregate._meta.db_table
        holder.execute(f"UPDATE {table} SET weight = 10 * weight WHERE annotator_id = %s", [annotators[2].pk])
    finally:
        holder.execute("SELECT pg_advisory_unlock(%s, %s)", [locks.PROJECT_WEIGHTS, project.pk])
        holder.close()
        batch.join(timeout=30)
    assert not failures, failures
    after = ItemAggregate.objects.get(item=items[0])

    # The same item recomputed now, with nothing held, gives the same figure: the batch used the new weights.
    item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk])
    assert ItemAggregate.objects.get(item=items[0]).p_best == pytest.approx(after.p_best)
    AnnotatorAggregate.objects.filter(annotator=annotators[2]).update(weight=1.0)
    item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk])
    assert ItemAggregate.objects.get(item=items[0]).p_best != pytest.approx(after.p_best), "the weights matter here"


def test_item_batches_of_one_project_do_not_wait_for_each_other() -> None:
    project, items, annotators = project_make(n_items=2, n_annotators=2)
    for item in items:
        for annotator in annotators:
            annotate_ifs(item, annotator, [(700, 100), (100, 700)])
    conninfo = worker_database_url()
    holder = psycopg.connect(conninfo, autocommit=False)
    holder.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)", [locks.PROJECT_WEIGHTS, project.pk])
    try:
        assert item_aggregates_recompute(project_id=project.pk, item_ids=[i.pk for i in items]) == 2
    finally:
        holder.rollback()
        holder.close()
