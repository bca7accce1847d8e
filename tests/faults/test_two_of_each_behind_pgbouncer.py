"""The two-of-each stack (tests.faults.test_two_of_each) with every process reaching PostgreSQL through PgBouncer in
transaction mode, where consecutive transactions of one client may run on different server connections and session
state (a session-level advisory lock, a cursor kept across transactions, a prepared statement) is lost or leaks to
another client. No acknowledged save lost or doubled, never two recomputes of the project at once (the lock is
transaction-scoped now), every job run once, and the figures equal to a recompute by this single process.

The pool is smaller than the processes' threads, so server connections really are shared between clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.processes import PgBouncer, worker_database_url
from tests.shared_work import work_shared_checked
from tests.stack import penumbra_stack
from tests.traffic import project_with_annotators

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

ENV = {
    "AGGREGATION_RECONCILE_SECONDS": "5",
    "AGGREGATION_PROJECT_DELAY": "1",
    "JOB_RECOVER_SECONDS": "2",
    "DB_TRANSACTION_POOLING": "1",
}


@pytest.fixture
def pgbouncer() -> Iterator[PgBouncer]:
    server = PgBouncer(pool_size=4)
    server.start()
    yield server
    server.stop()


def test_two_of_each_behind_pgbouncer_in_transaction_mode(transactional_db, tmp_path, redis, pgbouncer):
    traffic = project_with_annotators(n_items=10, n_annotators=6)
    pooled = pgbouncer.url_for(worker_database_url())
    with penumbra_stack(
        tmp_path,
        redis_url=redis.url,
        web_processes=2,
        workers=2,
        beat=True,
        env=ENV,
        database_url=pooled,
        worker_database_url=pooled,
    ) as stack:
        summary = work_shared_checked(stack, traffic, seconds=10, jobs=3)
        pooled_transactions = pgbouncer.transactions()
    # Every process went through the pooler: it ran at least a transaction per save.
    assert pooled_transactions > int(summary.split()[0]), pgbouncer.log()
    print(f"\n{summary}; {pooled_transactions} transactions through PgBouncer")
