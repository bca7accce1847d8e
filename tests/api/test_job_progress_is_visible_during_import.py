"""Job progress is written on the heartbeat's own connection, so pollers see it while the import's transaction is
still open."""

from __future__ import annotations

import time

import pytest
from django.db import connections, transaction

from projects.jobs import job_claim, job_run
from projects.models import Job


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_from_another_connection_before_commit(project):
    job = Job.objects.create(project=project, kind=Job.Kind.IMPORT_ITEMS)
    poller = connections.create_connection("default")
    seen: list[int] = []

    def work(job: Job, progress) -> dict:
        with transaction.atomic():
            progress(1234, 5000)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not seen:
                with poller.cursor() as cursor:
                    cursor.execute(f"SELECT progress_done FROM {Job._meta.db_table} WHERE id = %s", [job.pk])
                    if cursor.fetchone()[0] == 1234:
                        seen.append(1234)
                time.sleep(0.1)
            transaction.set_rollback(True)
        return {}

    try:
        job_run(job_id=job.pk, kinds=[Job.Kind.IMPORT_ITEMS], work=work)
    finally:
        poller.close()

    assert seen == [1234]
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert job_claim(job_id=job.pk, kinds=[Job.Kind.IMPORT_ITEMS]) is None
