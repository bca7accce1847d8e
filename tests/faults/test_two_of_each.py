"""Two gunicorn processes and two Celery workers (one with beat) on one PostgreSQL and one Redis, under concurrent
annotation through both web processes: no acknowledged save lost or doubled, never two recomputes of the project at
once (each worker logs its runs' start and end; the intervals must not overlap), every job run exactly once, and the
figures the workers left equal to a recompute by this single process."""

from __future__ import annotations

import itertools
import re
import time
from datetime import datetime

import pytest

from aggregation import services
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate
from projects.models import Job
from tests.processes import wait_for
from tests.stack import penumbra_stack
from tests.traffic import project_with_annotators, saves_missing

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

TRAFFIC_SECONDS = 10
JOBS = 3
ENV = {"AGGREGATION_RECONCILE_SECONDS": "5", "AGGREGATION_PROJECT_DELAY": "1", "JOB_RECOVER_SECONDS": "2"}
RUN = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): [^\]]*\] Project (\d+): recompute (started|finished)")


def _runs(logs: list[str], project_id: int) -> list[tuple[datetime, datetime]]:
    runs = []
    for log in logs:
        started = None
        for stamp, project, what in RUN.findall(log):
            if int(project) != project_id:
                continue
            at = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
            if what == "started":
                started = at
            elif started is not None:
                runs.append((started, at))
                started = None
    return sorted(runs)


def _open_run(log: str, project_id: int) -> bool:
    """Whether the log's last recompute of the project started and has not finished yet."""
    events = [what for _stamp, project, what in RUN.findall(log) if int(project) == project_id]
    return bool(events) and events[-1] == "started"


def _figures(project_id: int) -> dict[str, object]:
    items = {
        row["item_id"]: tuple(round(v, 9) if isinstance(v, float) else v for k, v in row.items() if k != "item_id")
        for row in ItemAggregate.objects.filter(item__project_id=project_id).values(
            "item_id", "p_best", "margin", "hesitation", "agreement", "signed_preference", "n_annotators"
        )
    }
    weights = {
        row["annotator_id"]: round(row["weight"], 9)
        for row in AnnotatorAggregate.objects.filter(project_id=project_id).values("annotator_id", "weight")
    }
    project = ProjectAggregate.objects.get(project_id=project_id)
    return {"items": items, "weights": weights, "agreement": project.agreement, "progress": project.progress}


def test_two_web_processes_and_two_workers_share_the_work(transactional_db, tmp_path, redis):
    traffic = project_with_annotators(n_items=10, n_annotators=6)
    project, items = traffic.project, traffic.items
    with penumbra_stack(tmp_path, redis_url=redis.url, web_processes=2, workers=2, beat=True, env=ENV) as stack:
        annotators = traffic.annotators(stack.urls)
        job_ids = []
        for n in range(JOBS):
            time.sleep(TRAFFIC_SECONDS / (JOBS + 1))
            job_ids.append(traffic.export_requested(stack.urls[n % 2]))
        time.sleep(TRAFFIC_SECONDS / (JOBS + 1))
        result = annotators.stop()

        assert not result.failures, result.failures[:5]
        assert result.saves > 30, f"too little traffic: {result.saves} saves"
        assert saves_missing(project.pk, result) == []

        wait_for(
            lambda: (
                Job.objects.filter(pk__in=job_ids, status=Job.Status.DONE).count() == JOBS and traffic.figures_fresh()
            ),
            "every job done and the figures fresh",
            stack.logs,
            poll=0.5,
        )
        jobs = list(Job.objects.filter(pk__in=job_ids).values_list("status", "attempts"))
        assert jobs == [(Job.Status.DONE, 1)] * JOBS, f"every job once: {jobs}"

        # The figures are fresh, but a run the last save scheduled may still be writing: wait until every run a
        # worker logged as started has logged its end.
        def logs_read() -> list[str]:
            return [worker.log_path.read_text(errors="replace") for worker in stack.workers]

        wait_for(
            lambda: not any(_open_run(log, project.pk) for log in logs_read()),
            "every project recompute finished",
            stack.logs,
        )
        logs = logs_read()

    runs = _runs(logs, project.pk)
    assert len(runs) >= 2, "the workers never recomputed the project"
    overlapping = [(a, b) for a, b in itertools.pairwise(runs) if b[0] < a[1]]
    assert overlapping == [], f"two recomputes of the project at once: {overlapping}"
    workers_used = sum(1 for log in logs if f"Project {project.pk}: recompute started" in log)

    left_by_workers = _figures(project.pk)
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[i.pk for i in items])
    services.project_aggregates_recompute(project_id=project.pk)
    assert _figures(project.pk) == left_by_workers
    print(
        f"\n{result.saves} saves through 2 web processes, {len(runs)} project recomputes by "
        f"{workers_used} workers, none overlapping; {JOBS} jobs each run once"
    )
