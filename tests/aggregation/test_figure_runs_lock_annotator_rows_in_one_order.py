"""The suggestion figures and the annotator weights write the same AnnotatorAggregate rows from concurrent runs
(a saver's project task while another recomputes). Both must take the row locks in annotator order: the weights
upsert in that order, and an UPDATE in table order (rows created as annotators appeared) made the two deadlock."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection

from aggregation.models import AnnotatorAggregate
from aggregation.services import annotator_aggregates_recompute
from suggestions.figures import suggestion_figures_recompute
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.processes import worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

TABLE = AnnotatorAggregate._meta.db_table


def _locked(conninfo: str, row_id: int) -> bool:
    with psycopg.connect(conninfo, autocommit=False) as other:
        try:
            other.execute(f"SELECT 1 FROM {TABLE} WHERE id = %s FOR UPDATE NOWAIT", [row_id])
        except psycopg.errors.LockNotAvailable:
            return True
        return False


def test_suggestion_figures_lock_annotator_rows_in_annotator_order():
    project, items, annotators = project_make(n_items=2, n_annotators=3)
    for item in items:
        for annotator in annotators:
            annotate_ifs(item, annotator, [(600, 300), (200, 500)])
    annotator_aggregates_recompute(project_id=project.pk)
    # Rows created in reverse annotator order, as when the last annotator labels first.
    rows = list(AnnotatorAggregate.objects.filter(project=project).order_by("-annotator_id"))
    AnnotatorAggregate.objects.filter(project=project).delete()
    for row in rows:
        row.pk = None
        row.save()
    first, last = rows[-1].pk, rows[0].pk  # lowest and highest annotator
    assert last < first

    conninfo = worker_database_url()
    holder = psycopg.connect(conninfo, autocommit=False)
    holder.execute(f"SELECT 1 FROM {TABLE} WHERE id = %s FOR UPDATE", [last])
    failures: list[BaseException] = []

    def figures() -> None:
        try:
            suggestion_figures_recompute(project_id=project.pk)
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    runner = threading.Thread(target=figures)
    runner.start()
    try:
        # The run now waits for the highest annotator's row; in annotator order it holds the lowest one already.
        deadline = time.monotonic() + 20
        while not _locked(conninfo, first) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _locked(conninfo, first), "the lowest annotator's row was not locked before the highest"
    finally:
        holder.rollback()
        holder.close()
        runner.join(timeout=30)
    assert not failures, failures
