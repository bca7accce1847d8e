"""An import requested while the broker is down answers 202 and stays pending; once a private redis-server is back,
beat's recovery task queues it from the outbox and a worker completes it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from projects.models import Item, Job, Membership
from tests.aggregation.conftest import celery_configured
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.processes import RedisServer, Worker, new_queue, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_an_import_requested_during_a_broker_outage_is_queued_by_beat(transactional_db, redis_server, tmp_path):
    project = ProjectFactory()
    lead = UserFactory(username="outage-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    client = Client()
    client.force_login(lead)
    rows = "".join(json.dumps({"id": f"o-{i}", "prompt": f"P{i}", "responses": ["a", "b"]}) + "\n" for i in range(7))
    queue = new_queue()
    worker = Worker(
        log_path=tmp_path / "worker.log",
        broker_url=redis_server.url,
        queue=queue,
        env={"JOB_RECOVER_SECONDS": "1"},
        beat=True,
    )
    with celery_configured(broker_url=redis_server.url, task_always_eager=False, task_default_queue=queue):
        redis_server.stop()
        response = client.post(
            f"/api/projects/{project.pk}/items/import/",
            {"file": SimpleUploadedFile("rows.jsonl", rows.encode(), content_type="application/jsonl")},
        )
        assert response.status_code == 202, response.content
        job = Job.objects.get(pk=response.json()["job"])
        assert job.status == Job.Status.PENDING
        assert job.enqueued_at is None  # the outbox remembers it was never sent

        redis_server.start()
        try:
            worker.start()
            wait_for(lambda: Job.objects.filter(pk=job.pk, status=Job.Status.DONE).exists(), "the import", worker.log)
        finally:
            worker.stop()

    job.refresh_from_db()
    assert job.enqueued_at is not None
    assert job.attempts == 1
    assert job.result["created"] == 7
    assert Item.objects.filter(project=project).count() == 7
