"""The one runner for background jobs (item and label imports, exports, suggestion generation).

Every job goes the same way, so that nothing is lost when a worker, the broker or a machine misbehaves:
- **Outbox.** A service creates the Job row and asks for it to be queued after commit (``job_enqueue_on_commit``).
  A broker error is logged, never raised: the request still answers 202 and the row stays pending with no
  ``enqueued_at``. ``jobs_recover`` (beat, every JOB_RECOVER_SECONDS) queues such rows again.
- **Atomic claim.** A task claims its job with one UPDATE: a pending job, or a running one whose heartbeat is older
  than JOB_STALE_SECONDS (its worker died). Two deliveries of the same task never both run it.
- **Heartbeat.** While the job runs, a thread with its own database connection writes ``heartbeat_at`` and the latest
  progress, so a poller sees progress while the job's own transaction is still open, and a long step that reports no
  progress still beats. The database clock is used throughout, so workers on other machines need not agree on time.
- **Recovery.** A running job whose heartbeat stopped is queued again by ``jobs_recover``; after JOB_MAX_ATTEMPTS
  it is failed with a message instead. Re-running is safe because every kind of job is idempotent: imports write
  everything in one transaction (a killed worker's transaction is rolled back), an export rewrites its output, and
  suggestion generation skips items that already have a suggestion.
- **Files in the database.** Inputs and outputs are JobChunk rows, so any worker can read an upload and any web
  server can serve an export, with no shared disk.

On SQLite (the embedded default, tasks in-process) there is no heartbeat thread: one writer at a time means it would
only wait for the job's own transaction.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import File
from django.db import connection, transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, Q, QuerySet, Value
from django.db.models.functions import Now

from config import events
from projects.models import Job, JobChunk

logger = logging.getLogger(__name__)

CHUNK_BYTES = 1024 * 1024
PROGRESS_EVERY_SECONDS = 0.5

# Kind -> the Celery task that runs it, filled by each app's AppConfig.ready (job_task_register): the task modules
# live in the apps above this one, which projects may not import.
_TASKS: dict[str, Task[[int], None]] = {}

Progress = Callable[..., None]
NOUNS: dict[str, str] = {
    Job.Kind.IMPORT_ITEMS: "item import",
    Job.Kind.IMPORT_LABELS: "label import",
    Job.Kind.EXPORT: "export",
    Job.Kind.SUGGEST: "suggestion generation",
}


def job_task_register(*, kind: str, task: Task[[int], None]) -> None:
    """Name the task that runs jobs of this kind; called once from the AppConfig.ready of the app that owns it."""
    if kind not in Job.Kind.values:
        raise ValueError(f"{kind!r} is not a kind of job; the kinds are {', '.join(Job.Kind.values)}.")
    registered = _TASKS.get(kind)
    if registered is not None and registered.name != task.name:
        raise ValueError(f"{kind} jobs already run with {registered.name}, not {task.name}.")
    _TASKS[kind] = task


def job_task_for(kind: str) -> Task[[int], None] | None:
    """The task registered for this kind of job, None before its app is ready."""
    return _TASKS.get(kind)


class JobFailed(Exception):
    """Raised by a job's work to fail it with a message (and row errors) a client can act on."""

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None, **result: Any) -> None:
        super().__init__(detail)
        self.result = {"detail": detail, **result}
        self.errors = errors or []


def _seconds_ago(seconds: int) -> ExpressionWrapper:
    return ExpressionWrapper(Now() - Value(timedelta(seconds=seconds)), output_field=DateTimeField())


def _stale() -> Q:
    cut = _seconds_ago(settings.JOB_STALE_SECONDS)
    return Q(status=Job.Status.RUNNING) & (
        Q(heartbeat_at__lt=cut) | Q(heartbeat_at__isnull=True, started_at__lt=cut) | Q(started_at__isnull=True)
    )


# ---- files ----------------------------------------------------------------------------------------------------


def job_input_store(*, job: Job, upload: File) -> None:
    """Keep an upload as the job's input, a megabyte per row, one row per statement: the web process holds one part
    at a time (``bulk_create`` would first make a list of every part, the whole file in memory several times)."""
    for part, data in enumerate(upload.chunks(CHUNK_BYTES)):
        JobChunk.objects.create(job=job, stream=JobChunk.Stream.INPUT, part=part, data=bytes(data))


def _parts(job_id: int, stream: str) -> Iterator[bytes]:
    # One query per part: only one megabyte is in memory at a time, with no cursor kept open between parts.
    count = JobChunk.objects.filter(job_id=job_id, stream=stream).count()
    for part in range(count):
        data = JobChunk.objects.filter(job_id=job_id, stream=stream, part=part).values_list("data", flat=True).get()
        yield bytes(data)


def job_stream_bytes(*, job_id: int, stream: str = JobChunk.Stream.OUTPUT) -> Iterator[bytes]:
    return _parts(job_id, stream)


def _raw_lines(job_id: int) -> Iterator[bytes]:
    rest = b""
    for data in _parts(job_id, JobChunk.Stream.INPUT):
        rest += data
        *lines, rest = rest.split(b"\n")
        for line in lines:
            yield line + b"\n"
    if rest:
        yield rest


def job_input_lines(*, job_id: int) -> Iterator[str]:
    """The input's lines (with their newline), decoded as UTF-8 (check them first with job_input_scan)."""
    for line in _raw_lines(job_id):
        yield line.decode("utf-8", errors="replace")


def job_input_file(*, job_id: int) -> io.BytesIO:
    """The whole input as one binary file, for formats that must be parsed whole (a JSON array, Parquet)."""
    return io.BytesIO(b"".join(_parts(job_id, JobChunk.Stream.INPUT)))


def job_input_scan(*, job_id: int, max_errors: int = 100) -> tuple[int, list[tuple[int, int, int]]]:
    """(number of lines, (line, byte offset in the file, the byte) of each line that is not valid UTF-8, at most
    ``max_errors`` of them): enough for an error to say where the file stops being UTF-8."""
    count = 0
    offset = 0
    bad: list[tuple[int, int, int]] = []
    for count, line in enumerate(_raw_lines(job_id), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            if len(bad) < max_errors:
                bad.append((count, offset + exc.start, line[exc.start]))
        offset += len(line)
    return count, bad


def job_input_head(*, job_id: int) -> bytes:
    """The input's first part (a megabyte at most): enough to tell which tool wrote the file."""
    data = JobChunk.objects.filter(job_id=job_id, stream=JobChunk.Stream.INPUT, part=0).values_list("data", flat=True)
    first = data.first()
    return b"" if first is None else bytes(first)


def job_input_copy(*, source_id: int, job: Job) -> None:
    """Give ``job`` the input of job ``source_id`` (a dry run's upload, imported for real), a part at a time."""
    for part, data in enumerate(_parts(source_id, JobChunk.Stream.INPUT)):
        JobChunk.objects.create(job=job, stream=JobChunk.Stream.INPUT, part=part, data=data)


def job_output_write(*, job_id: int, pieces: Iterable[str]) -> int:
    """Replace the job's output with ``pieces``; returns the number of bytes written. A re-run starts afresh."""
    JobChunk.objects.filter(job_id=job_id, stream=JobChunk.Stream.OUTPUT).delete()
    buffer, part, size = bytearray(), 0, 0
    for piece in pieces:
        buffer += piece.encode()
        if len(buffer) >= CHUNK_BYTES:
            JobChunk.objects.create(job_id=job_id, stream=JobChunk.Stream.OUTPUT, part=part, data=bytes(buffer))
            part, size, buffer = part + 1, size + len(buffer), bytearray()
    if buffer or part == 0:
        JobChunk.objects.create(job_id=job_id, stream=JobChunk.Stream.OUTPUT, part=part, data=bytes(buffer))
        size += len(buffer)
    return size


# ---- queueing -------------------------------------------------------------------------------------------------


def job_enqueue(*, job_id: int) -> bool:
    """Send the job's task; False (logged) if the broker refused. Never raises: the outbox retries later."""
    kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
    if kind is None:
        return False
    task = _TASKS.get(kind)
    if task is None:
        logger.error("no task is registered for %s jobs (job %s); is the app that runs them installed?", kind, job_id)
        return False
    try:
        if settings.CELERY_JOBS_QUEUE:
            task.apply_async(args=(job_id,), retry=False, queue=settings.CELERY_JOBS_QUEUE)
        else:  # the default queue, as every other task
            task.apply_async(args=(job_id,), retry=False)
    except Exception:
        # Eager mode runs the task here; the runner has already recorded any failure on the job row.
        logger.warning("could not queue job %s; jobs_recover will queue it again", job_id, exc_info=True)
        return False
    Job.objects.filter(pk=job_id, status__in=[Job.Status.PENDING, Job.Status.RUNNING]).update(enqueued_at=Now())
    return True


def job_enqueue_on_commit(job: Job) -> None:
    job_id = job.pk
    transaction.on_commit(lambda: job_enqueue(job_id=job_id))


def jobs_recover() -> dict[str, int]:
    """Queue again every job whose task never reached a worker or whose worker stopped beating; fail a job whose
    workers stopped JOB_MAX_ATTEMPTS times (it is probably what kills them)."""
    stale = Job.objects.filter(_stale())
    given_up = stale.filter(attempts__gte=settings.JOB_MAX_ATTEMPTS).update(
        status=Job.Status.FAILED,
        finished_at=Now(),
        result={"detail": f"The worker running this job stopped {settings.JOB_MAX_ATTEMPTS} times; it was abandoned."},
    )
    requeue = Q(pk__in=stale.values("pk")) | Q(
        Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=_seconds_ago(settings.JOB_REQUEUE_SECONDS)),
        status=Job.Status.PENDING,
    )
    queued = failed = 0
    for job_id in Job.objects.filter(requeue).order_by("id").values_list("pk", flat=True):
        if job_enqueue(job_id=job_id):
            queued += 1
        else:
            failed += 1
    return {"queued": queued, "not_queued": failed, "abandoned": given_up}


# ---- running --------------------------------------------------------------------------------------------------


def job_claim(*, job_id: int, kinds: Iterable[str]) -> Job | None:
    """Take the job for this worker: pending, or running with a stale heartbeat. None if someone else has it."""
    claimable = Q(status=Job.Status.PENDING) | _stale()
    claimed = Job.objects.filter(claimable, pk=job_id, kind__in=list(kinds)).update(
        status=Job.Status.RUNNING,
        started_at=Now(),
        heartbeat_at=Now(),
        attempts=F("attempts") + 1,
        progress_done=0,
    )
    if not claimed:
        return None
    return Job.objects.select_related("project").get(pk=job_id)


def _mine(job: Job) -> QuerySet[Job]:
    # A worker that lost its job to a re-run (it was too slow to beat) must not overwrite the re-run's result.
    return Job.objects.filter(pk=job.pk, attempts=job.attempts, status=Job.Status.RUNNING)


class _Heartbeat:
    """Records progress from the job's thread and writes it, with the heartbeat, from its own thread and connection."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.done: int | None = None
        self.total: int | None = job.progress_total
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        if connection.vendor == "postgresql":
            self.thread = threading.Thread(target=self._beat, name=f"job-{job.pk}-heartbeat", daemon=True)
            self.thread.start()

    def __call__(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total

    def _beat(self) -> None:
        last_beat = 0.0
        written: tuple[int | None, int | None] = (None, None)
        try:
            clock = 0.0
            while not self.stopped.wait(PROGRESS_EVERY_SECONDS):
                clock += PROGRESS_EVERY_SECONDS
                now = (self.done, self.total)
                if now == written and clock - last_beat < settings.JOB_HEARTBEAT_SECONDS:
                    continue
                fields: dict[str, Any] = {"heartbeat_at": Now()}
                if now[0] is not None:
                    fields["progress_done"] = now[0]
                if now[1] is not None:
                    fields["progress_total"] = now[1]
                try:
                    _mine(self.job).update(**fields)
                except Exception:  # a missed beat is retried; it must never fail the job
                    logger.warning("could not record the heartbeat of job %s", self.job.pk, exc_info=True)
                written, last_beat = now, clock
        finally:
            connection.close()  # this thread's own connection

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=10)


def job_finish(
    job: Job, *, status: str, result: dict[str, Any], errors: list[dict[str, Any]], progress: _Heartbeat
) -> None:
    fields: dict[str, Any] = {"status": status, "result": result, "errors": errors, "finished_at": Now()}
    total = progress.total
    done = (total if total is not None else progress.done) if status == Job.Status.DONE else progress.done
    if done is not None:
        fields["progress_done"] = done
    if total is not None:
        fields["progress_total"] = total
    _mine(job).update(**fields)


def job_run(*, job_id: int, kinds: Iterable[str], work: Callable[[Job, Progress], dict[str, Any]]) -> None:
    """Claim the job, run ``work(job, progress)`` with a heartbeat, and record its outcome on the row.

    ``work`` returns the result (an "errors" entry becomes the job's errors), raises JobFailed or ValidationError for
    a failure the client can act on; anything else is logged and recorded as an unexpected failure.
    """
    job = job_claim(job_id=job_id, kinds=kinds)
    if job is None:
        return
    heartbeat = _Heartbeat(job)
    try:
        result = work(job, heartbeat)
    except JobFailed as failed:
        job_finish(job, status=Job.Status.FAILED, result=failed.result, errors=failed.errors, progress=heartbeat)
    except ValidationError as invalid:
        detail = " ".join(invalid.messages)
        job_finish(job, status=Job.Status.FAILED, result={"detail": detail}, errors=[], progress=heartbeat)
    except SoftTimeLimitExceeded:
        detail = "Stopped by the time limit; run it again to finish."
        job_finish(job, status=Job.Status.FAILED, result={"detail": detail}, errors=[], progress=heartbeat)
    except Exception:
        logger.exception("job %s (%s) failed", job_id, job.kind)
        detail = f"The {NOUNS[job.kind]} failed unexpectedly."
        job_finish(job, status=Job.Status.FAILED, result={"detail": detail}, errors=[], progress=heartbeat)
    else:
        errors = result.pop("errors", [])
        job_finish(job, status=Job.Status.DONE, result=result, errors=errors, progress=heartbeat)
        _announce_done(job, result, errors)
    finally:
        heartbeat.stop()


#: What an import or export job's end is announced as (projects.webhooks); generation jobs are not announced.
_DONE_EVENTS: dict[str, str] = {
    Job.Kind.IMPORT_ITEMS: "import.done",
    Job.Kind.IMPORT_LABELS: "import.done",
    Job.Kind.EXPORT: "export.done",
}


def _announce_done(job: Job, result: dict[str, Any], errors: list[dict[str, Any]]) -> None:
    name = _DONE_EVENTS.get(job.kind)
    if name is None or job.project_id is None:
        return
    # The counts and names only: an export's card and an import's rows stay behind the API.
    summary = {key: value for key, value in result.items() if isinstance(value, int | str | bool) and key != "card"}
    events.project_event(
        project_id=job.project_id,
        name=name,
        data={"job_id": job.pk, "kind": job.kind, "result": summary, "errors": len(errors)},
    )
