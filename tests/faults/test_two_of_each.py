"""Two gunicorn processes and two Celery workers (one with beat) on one PostgreSQL and one Redis, under concurrent
annotation through both web processes: no acknowledged save lost or doubled, never two recomputes of the project at
once, every job run exactly once, and the figures the workers left equal to a recompute by this single process
(tests.shared_work)."""

from __future__ import annotations

import pytest

from tests.shared_work import work_shared_checked
from tests.stack import penumbra_stack
from tests.traffic import project_with_annotators

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

ENV = {"AGGREGATION_RECONCILE_SECONDS": "5", "AGGREGATION_PROJECT_DELAY": "1", "JOB_RECOVER_SECONDS": "2"}


def test_two_web_processes_and_two_workers_share_the_work(transactional_db, tmp_path, redis):
    traffic = project_with_annotators(n_items=10, n_annotators=6)
    with penumbra_stack(tmp_path, redis_url=redis.url, web_processes=2, workers=2, beat=True, env=ENV) as stack:
        print("\n" + work_shared_checked(stack, traffic, seconds=10, jobs=3))
