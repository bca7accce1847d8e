"""Several web processes and workers on one project: what the multi-process tests check once the traffic stops.

Every acknowledged save is in the database once, every job ran once, never two recomputes of the project at once
(each worker logs its runs' start and end; the intervals must not overlap), and the figures the workers left equal
a recompute by the test process alone."""

from __future__ import annotations

import itertools
import re
import time
from datetime import datetime

from aggregation import services
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate
from projects.models import Job
from tests.processes import wait_for
from tests.stack import Stack
from tests.traffic import TrafficProject, saves_missing

RUN = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): [^\]]*\] Project (\d+): recompute (started|finished)")


def recompute_runs(logs: list[str], project_id: int) -> list[tuple[datetime, datetime]]:
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


def figures(project_id: int) -> dict[str, object]:
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


def work_shared_checked(stack: Stack, traffic: TrafficProject, *, seconds: float, jobs: int) -> str:
    """Annotators save through every web process for ``seconds`` while the lead requests ``jobs`` exports; then
    every check above. Returns a one-line summary."""
    project = traffic.project
    annotators = traffic.annotators(stack.urls)
    job_ids = []
    for n in range(jobs):
        time.sleep(seconds / (jobs + 1))
        job_ids.append(traffic.export_requested(stack.urls[n % len(stack.urls)]))
    time.sleep(seconds / (jobs + 1))
    result = annotators.stop()

    assert not result.failures, result.failures[:5]
    assert result.saves > 30, f"too little traffic: {result.saves} saves"
    assert saves_missing(project.pk, result) == []

    wait_for(
        lambda: Job.objects.filter(pk__in=job_ids, status=Job.Status.DONE).count() == jobs and traffic.figures_fresh(),
        "every job done and the figures fresh",
        stack.logs,
        poll=0.5,
    )
    done = list(Job.objects.filter(pk__in=job_ids).values_list("status", "attempts"))
    assert done == [(Job.Status.DONE, 1)] * jobs, f"every job once: {done}"

    # The figures are fresh, but a run the last save scheduled may still be writing: wait until every run a
    # worker logged as started has logged its end.
    def logs_read() -> list[str]:
        return [worker.log_path.read_text(errors="replace") for worker in stack.workers]

    wait_for(lambda: not any(_open_run(log, project.pk) for log in logs_read()), "every recompute finished", stack.logs)
    logs = logs_read()

    runs = recompute_runs(logs, project.pk)
    assert len(runs) >= 2, "the workers never recomputed the project"
    overlapping = [(a, b) for a, b in itertools.pairwise(runs) if b[0] < a[1]]
    assert overlapping == [], f"two recomputes of the project at once: {overlapping}"
    workers_used = sum(1 for log in logs if f"Project {project.pk}: recompute started" in log)

    left_by_workers = figures(project.pk)
    services.item_aggregates_recompute(project_id=project.pk, item_ids=[i.pk for i in traffic.items])
    services.project_aggregates_recompute(project_id=project.pk)
    assert figures(project.pk) == left_by_workers
    return (
        f"{result.saves} saves through {len(stack.urls)} web processes, {len(runs)} project recomputes by "
        f"{workers_used} workers, none overlapping; {jobs} jobs each run once"
    )
