"""A real gunicorn keeps serving people while a service is gone. Redis stopped (a private redis-server): login,
pages, a study entry and logout work, sessions and the signed-in user read from PostgreSQL. PostgreSQL unreachable
(the web process reaches it through a TCP proxy the test cuts): the API answers a JSON 503 with Retry-After, pages a
503 page saying to retry, and both recover by themselves when the database is back."""

from __future__ import annotations

import httpx
import pytest
from rest_framework.authtoken.models import Token

from annotation.crowd.services import study_link_create
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.processes import worker_database_url
from tests.stack import TcpProxy, log_in, penumbra_stack

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def _people():
    project = ProjectFactory(name="Outage project")
    lead, annotator = UserFactory(username="outage-lead"), UserFactory(username="outage-annotator")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(3, project=project)
    link = study_link_create(project=project, created_by=lead, name="Crowd")
    return project, lead, annotator, link


def _log_out(client: httpx.Client) -> httpx.Response:
    return client.post("/accounts/logout/", data={"csrfmiddlewaretoken": client.cookies["csrftoken"]})


def test_people_log_in_work_and_log_out_while_redis_is_down(transactional_db, tmp_path, redis):
    project, _, annotator, link = _people()
    with penumbra_stack(tmp_path, redis_url=redis.url, workers=0) as stack:
        before = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
        assert log_in(before, annotator.username).status_code == 200  # signed in while Redis is up: cached

        redis.stop()

        # The session signed in before the outage is read from the database.
        assert before.get("/").status_code == 200
        assert before.get(f"/projects/{project.pk}/annotate/").status_code == 200
        assert _log_out(before).url.path == "/accounts/login/"
        assert before.get("/", follow_redirects=False).status_code == 302, "the logout did not end the session"

        during = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
        signed_in = log_in(during, annotator.username)
        assert signed_in.status_code == 200
        assert signed_in.url.path == "/"
        assert during.get(f"/projects/{project.pk}/annotate/").status_code == 200
        assert _log_out(during).status_code == 200
        assert during.get("/", follow_redirects=False).status_code == 302

        participant = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
        entered = participant.get(f"/study/{link.token}/", params={"PROLIFIC_PID": "outage-participant-1"})
        assert entered.status_code == 200, entered.text[:300]
        assert entered.url.path == f"/projects/{project.pk}/annotate/"
        assert "Server Error" not in (tmp_path / "web-0.log").read_text(errors="replace")


def test_the_api_answers_503_with_retry_after_while_postgresql_is_gone(transactional_db, tmp_path, redis):
    project, lead, _, _ = _people()
    token = Token.objects.create(user=lead).key
    target = httpx.URL(worker_database_url())
    proxy = TcpProxy(target.host, target.port or 5432)
    try:
        with penumbra_stack(
            tmp_path, redis_url=redis.url, workers=0, database_url=proxy.url_for(worker_database_url())
        ) as stack:
            api = httpx.Client(base_url=stack.url, headers={"Authorization": f"Token {token}"}, timeout=30)
            page = httpx.Client(base_url=stack.url, follow_redirects=True, timeout=30)
            assert log_in(page, lead.username).status_code == 200
            assert api.get(f"/api/projects/{project.pk}/").status_code == 200

            proxy.cut()

            for method, path in (
                ("GET", f"/api/projects/{project.pk}/"),
                ("GET", "/api/projects/"),
                ("POST", f"/api/projects/{project.pk}/annotations/"),
            ):
                answer = api.request(method, path, json={} if method == "POST" else None)
                assert answer.status_code == 503, (method, path, answer.status_code, answer.text[:300])
                assert answer.headers["Retry-After"].isdigit()
                assert answer.headers["Content-Type"] == "application/json"
                assert answer.json() == {"detail": "The database is briefly unavailable; retry shortly.", "errors": {}}

            dashboard = page.get(f"/projects/{project.pk}/dashboard/")
            assert dashboard.status_code == 503
            assert dashboard.headers["Retry-After"].isdigit()
            assert "Back in a moment" in dashboard.text

            proxy.restore()

            assert api.get(f"/api/projects/{project.pk}/").status_code == 200
            assert page.get("/").status_code == 200
    finally:
        proxy.close()
