"""With DATABASE_REPLICA_URL set, a real gunicorn reads the leads' dashboard from the replica and says how far
behind it is (an export run by a real worker says it in its result), while every other page and the API read and
write the primary. The "replica" here is the test database reached through a TCP proxy the test can cut (no second
server to set up): cut, the dashboard fails and the rest works; restored, the dashboard is back. What this shows is
the routing; the lag shown is 0 s, as the proxied server replays nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from rest_framework.authtoken.models import Token

from projects.models import Job, Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.processes import RedisServer, wait_for, worker_database_url
from tests.stack import TcpProxy, log_in, penumbra_stack
from tests.traffic import project_with_annotators

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    # A Redis of its own: the shared one may cache a user of an earlier run under the same id.
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def test_the_dashboard_reads_from_the_replica_and_says_how_far_behind(transactional_db, tmp_path, redis):
    project = ProjectFactory(name="Replica project")
    lead = UserFactory(username="replica-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    ItemFactory.create_batch(3, project=project)
    token = Token.objects.create(user=lead).key
    target = httpx.URL(worker_database_url())
    replica = TcpProxy(target.host, target.port or 5432)
    try:
        env = {"DATABASE_REPLICA_URL": replica.url_for(worker_database_url())}
        with penumbra_stack(tmp_path, redis_url=redis.url, workers=0, env=env) as stack:
            page = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
            api = httpx.Client(base_url=stack.url, headers={"Authorization": f"Token {token}"}, timeout=30)
            assert log_in(page, lead.username).status_code == 200
            dashboard = page.get(f"/projects/{project.pk}/dashboard/")
            assert dashboard.status_code == 200, dashboard.text[:300]
            assert "read from a replica, 0 s behind the primary" in dashboard.text

            replica.cut()

            assert page.get(f"/projects/{project.pk}/dashboard/").status_code == 503
            assert page.get("/").status_code == 200  # the lead's projects, from the primary
            assert api.get(f"/api/projects/{project.pk}/").status_code == 200

            replica.restore()

            assert page.get(f"/projects/{project.pk}/dashboard/").status_code == 200
    finally:
        replica.close()


def test_an_export_reads_from_the_replica_and_says_how_far_behind(transactional_db, tmp_path, redis):
    traffic = project_with_annotators(n_items=3, n_annotators=2)
    target = httpx.URL(worker_database_url())
    replica = TcpProxy(target.host, target.port or 5432)
    try:
        env = {"DATABASE_REPLICA_URL": replica.url_for(worker_database_url())}
        with penumbra_stack(tmp_path, redis_url=redis.url, workers=1, env=env) as stack:
            job_id = traffic.export_requested(stack.url)
            wait_for(lambda: Job.objects.filter(pk=job_id, status=Job.Status.DONE).exists(), "the export", stack.logs)
    finally:
        replica.close()
    result = Job.objects.get(pk=job_id).result
    # Only an export whose reads went through the replica carries its lag.
    assert result["replica_lag_seconds"] == 0, result
