"""The client: one method per thing a script does, each a thin call to the REST API documented at /api/docs/.

Imports and suggestion generation run as jobs on the server; the methods that start one wait for it by default,
polling the job and showing a tqdm bar when standard error is a terminal (``progress=True``/``False`` forces it).
A failed job raises JobFailed with the server's errors by line; any refused request raises PenumbraError.

Requests that fail on the way (the connection drops, 429 Too Many Requests, a 5xx) are tried again with exponential
backoff, waiting as long as a Retry-After header asks. Reads are always safe to repeat. A POST is repeated only
when the server cannot have acted on it (it was never sent, or the answer was 429 or 503) or when it carries a
``client_token``, which makes the server keep one result for any number of tries; otherwise a POST that may have
reached the server (an upload that starts a job) is not sent twice, and the error is raised.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO, get_args

import httpx
from tqdm import tqdm

from penumbra_client.errors import JobFailed, PenumbraError
from penumbra_client.types import ChosenAs, ExportFormat, Format, Mode, OnDuplicate, RatingsRule, ResponseStatus

if TYPE_CHECKING:
    from datasets import Dataset

FORMATS: tuple[Format, ...] = get_args(Format)
FINISHED = ("done", "failed")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NOT_ACTED_ON = frozenset({429, 503})  # the server says it did not take the request: safe to send any request again
# Raised before a byte of the request left: nothing can have happened on the server.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
SPOOL_BYTES = 16 * 1024**2  # rows to upload stay in memory up to this size, then go to a temporary file

Upload = str | Path | BinaryIO | Iterable[Mapping[str, Any]]


@dataclass(frozen=True)
class Project:
    id: int
    slug: str
    name: str
    mode: str
    phase: str
    role: str | None
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def of(cls, body: dict[str, Any]) -> Project:
        return cls(body["id"], body["slug"], body["name"], body["mode"], body["phase"], body.get("role"), body)


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    status: str
    progress_done: int
    progress_total: int | None
    result: dict[str, Any]
    errors: list[dict[str, Any]]

    @classmethod
    def of(cls, body: dict[str, Any]) -> Job:
        return cls(
            body["id"],
            body["kind"],
            body["status"],
            body.get("progress_done") or 0,
            body.get("progress_total"),
            body.get("result") or {},
            body.get("errors") or [],
        )

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


ProjectRef = int | Project


def _id(project: ProjectRef) -> int:
    return project.id if isinstance(project, Project) else int(project)


class Penumbra:
    """``Penumbra("http://127.0.0.1:8000", token)``; or ``Penumbra.from_env()`` (PENUMBRA_URL, PENUMBRA_TOKEN)."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 60.0,
        poll_seconds: float = 0.5,
        retries: int = 5,
        backoff_seconds: float = 0.5,
        max_wait_seconds: float = 60.0,
    ) -> None:
        """``retries``: how many times a failed request is tried again; waits double from ``backoff_seconds`` (with
        a little jitter) and never exceed ``max_wait_seconds``, a server's Retry-After included."""
        self.poll_seconds = poll_seconds
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self.max_wait_seconds = max_wait_seconds
        self._sleep: Callable[[float], None] = time.sleep
        self._http = httpx.Client(
            base_url=url.rstrip("/"), headers={"Authorization": f"Token {token}"}, timeout=timeout
        )

    @classmethod
    def from_env(cls) -> Penumbra:
        return cls(os.environ.get("PENUMBRA_URL", "http://127.0.0.1:8000"), os.environ["PENUMBRA_TOKEN"])

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Penumbra:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- plumbing --------------------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._send(method, path, **kwargs)
        self._raise_for(response)
        return response.json() if response.content else None

    def _send(self, method: str, path: str, *, rewind: Sequence[IO[bytes]] = (), **kwargs: Any) -> httpx.Response:
        """The response, after trying again where it is safe (module docstring); ``rewind``: files to send again."""
        idempotent = method.upper() != "POST" or _has_client_token(kwargs.get("json"))
        for attempt in range(self.retries + 1):
            for handle in rewind:
                handle.seek(0)
            last = attempt == self.retries
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if last or not (idempotent or isinstance(exc, NOT_SENT)):
                    raise
                self._sleep(self._wait(attempt, None))
                continue
            retry = response.status_code in (RETRY_STATUSES if idempotent else NOT_ACTED_ON)
            if last or not retry:
                return response
            self._sleep(self._wait(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait(self, attempt: int, retry_after: str | None) -> float:
        asked = _seconds(retry_after)
        if asked is not None:
            return min(asked, self.max_wait_seconds)
        return min(self.backoff_seconds * 2.0**attempt * (1 + random.random() / 4), self.max_wait_seconds)

    @staticmethod
    def _raise_for(response: httpx.Response) -> None:
        if response.is_success:
            return
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text[:500] or response.reason_phrase}
        if not isinstance(body, dict):
            body = {"detail": str(body)}
        raise PenumbraError(response.status_code, str(body.get("detail", response.reason_phrase)), body.get("errors"))

    def _pages(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        page: dict[str, Any] = self._request("GET", path, params=params)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            page = self._request("GET", page["next"])

    # ---- projects and members --------------------------------------------------------------------------------------

    def projects(self) -> list[Project]:
        return [Project.of(body) for body in self._request("GET", "/api/projects/")]

    def project(self, project: ProjectRef) -> Project:
        return Project.of(self._request("GET", f"/api/projects/{_id(project)}/"))

    def create_project(
        self, name: str, *, mode: Mode = "ifs", criteria: dict[str, float] | None = None, **settings: Any
    ) -> Project:
        """A project you lead; ``settings`` are any editable settings (overlap, likert_points, blind_rate, …)."""
        body: dict[str, Any] = {"name": name, "settings": {"mode": mode, **settings}}
        if criteria:
            body["criteria"] = [{"name": k, "weight": v} for k, v in criteria.items()]
        return Project.of(self._request("POST", "/api/projects/", json=body))

    def update_project(self, project: ProjectRef, **changes: Any) -> Project:
        return Project.of(self._request("PATCH", f"/api/projects/{_id(project)}/", json=changes))

    def members(self, project: ProjectRef) -> list[dict[str, str]]:
        return list(self._request("GET", f"/api/projects/{_id(project)}/members/"))

    def add_member(self, project: ProjectRef, username: str, role: str = "annotator") -> dict[str, str]:
        body = {"username": username, "role": role}
        return dict(self._request("POST", f"/api/projects/{_id(project)}/members/", json=body))

    def items(self, project: ProjectRef) -> Iterator[dict[str, Any]]:
        return self._pages(f"/api/projects/{_id(project)}/items/")

    def annotations(self, project: ProjectRef, *, annotator: str | None = None) -> Iterator[dict[str, Any]]:
        params = {"annotator": annotator} if annotator else None
        return self._pages(f"/api/projects/{_id(project)}/annotations/", params)

    # ---- imports and jobs ------------------------------------------------------------------------------------------

    def import_items(
        self,
        project: ProjectRef,
        source: Upload | Dataset,
        *,
        format: Format = "native",
        on_duplicate: OnDuplicate = "reject",
        skip_invalid: bool = False,
        trl_chosen_as: ChosenAs = "gold",
        scheme: str | None = None,
        items_key: str | None = None,
        wait: bool = True,
        progress: bool | None = None,
    ) -> Job:
        """Upload items: a file (JSON Lines, or another tool's file: ``format`` is one of FORMATS), or rows, as a
        list of dicts (``ItemRow``, ``PreferenceRow``) or a ``datasets.Dataset``, sent as JSON Lines.

        ``scheme`` and ``items_key`` tell how to read another tool's file where it does not say (the server's
        import docs)."""
        fields = {
            "format": format,
            "on_duplicate": on_duplicate,
            "skip_invalid": str(skip_invalid).lower(),
            "trl_chosen_as": trl_chosen_as,
            **_reading(scheme=scheme, items_key=items_key),
        }
        return self._upload(f"/api/projects/{_id(project)}/items/import/", source, fields, wait, progress)

    def import_labels(
        self,
        project: ProjectRef,
        source: Upload | Dataset,
        *,
        format: Format = "native",
        skip_invalid: bool = False,
        scheme: str | None = None,
        ratings_rule: RatingsRule = "refuse",
        statuses: Sequence[ResponseStatus] = ("submitted",),
        scale: tuple[int, int] | None = None,
        wait: bool = True,
        progress: bool | None = None,
    ) -> Job:
        """Upload existing labels, in Penumbra's rows (``LabelRow``) or another tool's file, for the project's mode.

        ``ratings_rule``: how one rating per response becomes a label (``binary``: the higher-rated response is
        preferred; ``likert``: a point from the difference; ``refuse``: not at all). ``statuses``: which Argilla
        responses count. ``scale``: a Potato pairwise scale's (min, max). The job's result states the rule used."""
        fields = {
            "format": format,
            "skip_invalid": str(skip_invalid).lower(),
            **_reading(scheme=scheme, ratings_rule=ratings_rule, scale=f"{scale[0]}..{scale[1]}" if scale else None),
        }
        data: dict[str, Any] = {**fields, "statuses": list(statuses)}
        return self._upload(f"/api/projects/{_id(project)}/labels/import/", source, data, wait, progress)

    def _upload(
        self, path: str, source: Upload | Dataset, fields: dict[str, Any], wait: bool, progress: bool | None
    ) -> Job:
        if isinstance(source, str | Path):
            with open(source, "rb") as handle:
                accepted = self._post_file(path, fields, Path(source).name, handle)
        elif hasattr(source, "read"):
            accepted = self._post_file(path, fields, "upload", source)  # type: ignore[arg-type]
        else:
            with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
                for row in source:
                    spool.write(json.dumps(dict(row), ensure_ascii=False, default=str).encode() + b"\n")
                accepted = self._post_file(path, fields, "rows.jsonl", spool)
        job = self.job(accepted["job"])
        return self.wait(job, progress=progress) if wait else job

    def _post_file(self, path: str, fields: dict[str, Any], name: str, handle: IO[bytes]) -> Any:
        rewind = [handle] if handle.seekable() else []
        response = self._send("POST", path, data=fields, files={"file": (name, handle)}, rewind=rewind)
        self._raise_for(response)
        return response.json()

    def job(self, job_id: int) -> Job:
        return Job.of(self._request("GET", f"/api/jobs/{job_id}/"))

    def wait(self, job: Job | int, *, progress: bool | None = None, timeout: float | None = None) -> Job:
        """Poll a job until it ends; JobFailed if it failed. A bar on a terminal unless ``progress`` says."""
        current = job if isinstance(job, Job) else self.job(job)
        show = sys.stderr.isatty() if progress is None else progress
        deadline = None if timeout is None else time.monotonic() + timeout
        with tqdm(total=current.progress_total, desc=current.kind, unit="row", disable=not show) as bar:
            while True:
                bar.total = current.progress_total
                bar.update(max(0, current.progress_done - bar.n))
                if current.finished:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"job {current.id} is still {current.status} after {timeout} s")
                time.sleep(self.poll_seconds)
                current = self.job(current.id)
        if current.status == "failed":
            raise JobFailed(current)
        return current

    # ---- figures, suggestions, handoff -----------------------------------------------------------------------------

    def stats(self, project: ProjectRef) -> dict[str, Any]:
        return dict(self._request("GET", f"/api/projects/{_id(project)}/stats/"))

    def generate_suggestions(
        self,
        project: ProjectRef,
        *,
        item_ids: list[int] | None = None,
        overwrite: bool = False,
        wait: bool = True,
        progress: bool | None = None,
    ) -> Job:
        """Ask the project's LLM endpoint for suggestions (needs the project's or the server's LLM settings)."""
        body = {"item_ids": item_ids, "overwrite": overwrite}
        accepted = self._request("POST", f"/api/projects/{_id(project)}/suggestions/generate/", json=body)
        job = self.job(accepted["job"])
        return self.wait(job, progress=progress) if wait else job

    def suggestions(self, project: ProjectRef) -> Iterator[dict[str, Any]]:
        return self._pages(f"/api/projects/{_id(project)}/suggestions/")

    def handoff(self, project: ProjectRef) -> dict[str, Any]:
        """Hand the remaining items to the LLM; PenumbraError (400) with the reason when the rule does not allow it."""
        return dict(self._request("POST", f"/api/projects/{_id(project)}/handoff/"))

    def undo_handoff(self, project: ProjectRef) -> dict[str, Any]:
        return dict(self._request("DELETE", f"/api/projects/{_id(project)}/handoff/"))

    # ---- exports ---------------------------------------------------------------------------------------------------

    def export(self, project: ProjectRef, path: str | Path, *, format: ExportFormat = "dpo", **filters: Any) -> Path:
        """Stream an export (dpo, soft, ifs, annotations) to a file; filters as in the API (min_annotators, …).

        The file is written as it arrives, never held whole in memory; a dropped connection before the answer
        starts is tried again (an export is a read)."""
        params = {"format": format, **{k: v for k, v in filters.items() if v is not None}}
        target = Path(path)
        for attempt in range(self.retries + 1):
            try:
                self._stream_to(target, f"/api/projects/{_id(project)}/export/", params)
                return target
            except _Retry as retry:
                if attempt == self.retries:
                    raise retry.cause from None
                self._sleep(self._wait(attempt, retry.retry_after))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _stream_to(self, target: Path, path: str, params: dict[str, Any]) -> None:
        try:
            with self._http.stream("GET", path, params=params) as response:
                if response.status_code in RETRY_STATUSES:
                    response.read()
                    raise _Retry(PenumbraError(response.status_code, response.reason_phrase),
                                 response.headers.get("Retry-After"))  # fmt: skip
                if not response.is_success:
                    response.read()
                    self._raise_for(response)
                with target.open("wb") as handle:
                    for chunk in response.iter_bytes():
                        handle.write(chunk)
        except httpx.TransportError as exc:
            raise _Retry(exc, None) from exc

    def export_dataset(
        self,
        project: ProjectRef,
        *,
        format: ExportFormat = "dpo",
        cache_dir: str | Path | None = None,
        **filters: Any,
    ) -> Dataset:
        """The export as a ``datasets.Dataset`` (``pip install './client[datasets]'``).

        The export streams to a file on disk and the Dataset is built from it as Arrow files in ``cache_dir`` (the
        datasets cache by default) and memory-mapped, so an export larger than memory still loads."""
        from datasets import Dataset

        with tempfile.TemporaryDirectory() as folder:
            path = self.export(project, Path(folder) / f"{format}.jsonl", format=format, **filters)
            features = self._card_features(project, format=format, **filters)
            if path.stat().st_size == 0:
                return Dataset.from_list([], features=features)
            # The Arrow copy lives in the cache, so the dataset outlives the downloaded JSON Lines.
            return Dataset.from_json(
                str(path), features=features, cache_dir=None if cache_dir is None else str(cache_dir)
            )

    def _card_features(self, project: ProjectRef, *, format: str, **filters: Any) -> Any:
        """The column types the export's dataset card declares (the same in every annotation mode), or None (the
        types guessed from the values) when the server's card has none."""
        import yaml
        from datasets import Features

        params = {"format": format, **{k: v for k, v in filters.items() if v is not None}}
        try:
            response = self._http.get(f"/api/projects/{_id(project)}/export/card/", params=params)
        except httpx.TransportError:
            return None
        if not response.is_success or not response.text.startswith("---"):
            return None
        front = yaml.safe_load(response.text.split("---", 2)[1]) or {}
        listed = (front.get("dataset_info") or {}).get("features")
        return Features._from_yaml_list(listed) if listed else None


class _Retry(Exception):
    def __init__(self, cause: Exception, retry_after: str | None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.retry_after = retry_after


def _has_client_token(body: Any) -> bool:
    return isinstance(body, Mapping) and bool(body.get("client_token"))


def _seconds(retry_after: str | None) -> float | None:
    """Retry-After as seconds from now: a number of seconds or an HTTP date (RFC 9110)."""
    if not retry_after:
        return None
    try:
        return max(0.0, float(retry_after))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(retry_after)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _reading(**options: str | None) -> dict[str, str]:
    return {name: value for name, value in options.items() if value is not None}
