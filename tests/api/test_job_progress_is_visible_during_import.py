"""Job progress is written on its own connection, so pollers see it while the import's transaction is still open."""

from __future__ import annotations

import pytest
from django.db import connections, transaction

from projects.import_tasks import _ProgressWriter
from projects.models import Job


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_from_another_connection_before_commit(project):
    job = Job.objects.create(project=project, kind=Job.Kind.IMPORT_ITEMS, status=Job.Status.RUNNING)
    poller = connections.create_connection("default")
    try:
        with transaction.atomic():
            writer = _ProgressWriter(job.pk)
            writer(1234, 5000)
            writer.close()
            with poller.cursor() as cursor:
                cursor.execute(f"SELECT progress_done FROM {Job._meta.db_table} WHERE id = %s", [job.pk])
                seen = cursor.fetchone()[0]
            transaction.set_rollback(True)
    finally:
        poller.close()

    assert seen == 1234
