"""schemathesis against /api/schema/, through the WSGI app (no server): for a lead's token and an annotator's, at
least 1,000 generated requests each, with no server error, no response outside its documented schema and no
undocumented status.

Path ids are the test project's (and its item's, annotation's, job's) three times in four, so most requests reach
real objects rather than a 404.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.models import Annotation
from config.wsgi import application
from projects.models import Job

CASES_PER_TOKEN = 1000
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance, content_type_conformance]

pytestmark = [pytest.mark.slow]


def _operations() -> list[Any]:
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    return [result.ok() for result in schema.get_all_operations()]


def _run(operations: list[Any], headers: dict[str, str], ids: dict[str, int]) -> dict[str, int]:
    per_operation = -(-CASES_PER_TOKEN // len(operations))
    tally = {"cases": 0, "statuses": 0}
    statuses: set[int] = set()
    failures: list[str] = []
    for operation in operations:

        @settings(
            max_examples=per_operation,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(), real=st.integers(0, 3))
        def check(case: Any, real: int) -> None:
            if real and case.path_parameters:
                for name in case.path_parameters:
                    if name in ids:
                        case.path_parameters[name] = ids[name]
            response = case.call(headers=headers)
            statuses.add(response.status_code)
            tally["cases"] += 1
            case.validate_response(response, checks=CHECKS)

        try:
            check()
        except Exception as failure:  # keep going: one report lists every operation that fails
            failures.append(f"{operation.method.upper()} {operation.path}: {str(failure)[:1500]}")
    tally["statuses"] = len(statuses)
    assert not failures, "\n\n".join(failures)
    return tally


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    # Through the raw WSGI handler, every request's end closes the database connection, and with it the test's
    # transaction; Django's test client disconnects this handler in the same way.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def ids(labelled_project, annotator) -> dict[str, int]:
    item = labelled_project.items.filter(is_blind=False).order_by("id").first()
    job = Job.objects.create(project=labelled_project, kind=Job.Kind.IMPORT_ITEMS)
    annotation = Annotation.objects.filter(annotator=annotator, project=labelled_project).order_by("id").first()
    return {"project_id": labelled_project.pk, "item_id": item.pk, "annotation_id": annotation.pk, "job_id": job.pk}


@pytest.mark.parametrize("who", ["lead", "annotator"])
def test_generated_requests_meet_the_documented_contract(who, ids, request):
    user = request.getfixturevalue(who)
    token = Token.objects.create(user=user)

    tally = _run(_operations(), {"Authorization": f"Token {token.key}"}, ids)
    print(f"{who}: {tally}")

    assert tally["cases"] >= CASES_PER_TOKEN, tally
