"""The client: one method per thing a script does, each a thin call to the REST API documented at /api/docs/.

Imports and suggestion generation run as jobs on the server; the methods that start one wait for it by default,
polling the job and showing a tqdm bar when standard error is a terminal (``progress=True``/``False`` forces it).
A failed job raises JobFailed with the server's errors by line; any refused request raises PenumbraError.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import httpx
from tqdm import tqdm

from penumbra_client.errors import JobFailed, PenumbraError

if TYPE_CHECKING:
    from datasets import Dataset

FORMATS = ("native", "label-studio", "potato", "argilla", "hf")
FINISHED = ("done", "failed")


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

    def __init__(self, url: str, token: str, *, timeout: float = 60.0, poll_seconds: float = 0.5) -> None:
        self.poll_seconds = poll_seconds
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
        response = self._http.request(method, path, **kwargs)
        self._raise_for(response)
        return response.json() if response.content else None

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
        self, name: str, *, mode: str = "ifs", criteria: dict[str, float] | None = None, **settings: Any
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
        file: str | Path | BinaryIO,
        *,
        format: str = "native",
        on_duplicate: str = "reject",
        skip_invalid: bool = False,
        trl_chosen_as: str = "gold",
        wait: bool = True,
        progress: bool | None = None,
    ) -> Job:
        """Upload items (JSON Lines, or another tool's file: ``format`` is one of FORMATS)."""
        fields = {
            "format": format,
            "on_duplicate": on_duplicate,
            "skip_invalid": str(skip_invalid).lower(),
            "trl_chosen_as": trl_chosen_as,
        }
        return self._upload(f"/api/projects/{_id(project)}/items/import/", file, fields, wait, progress)

    def import_labels(
        self,
        project: ProjectRef,
        file: str | Path | BinaryIO,
        *,
        format: str = "native",
        skip_invalid: bool = False,
        wait: bool = True,
        progress: bool | None = None,
    ) -> Job:
        """Upload existing labels, in Penumbra's rows or another tool's file, for the project's mode."""
        fields = {"format": format, "skip_invalid": str(skip_invalid).lower()}
        return self._upload(f"/api/projects/{_id(project)}/labels/import/", file, fields, wait, progress)

    def _upload(
        self, path: str, file: str | Path | BinaryIO, fields: dict[str, str], wait: bool, progress: bool | None
    ) -> Job:
        if isinstance(file, str | Path):
            with open(file, "rb") as handle:
                accepted = self._request("POST", path, data=fields, files={"file": (Path(file).name, handle)})
        else:
            accepted = self._request("POST", path, data=fields, files={"file": ("upload", file)})
        job = self.job(accepted["job"])
        return self.wait(job, progress=progress) if wait else job

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

    def export(self, project: ProjectRef, path: str | Path, *, format: str = "dpo", **filters: Any) -> Path:
        """Stream an export (dpo, soft, ifs, annotations) to a file; filters as in the API (min_annotators, …)."""
        params = {"format": format, **{k: v for k, v in filters.items() if v is not None}}
        target = Path(path)
        with self._http.stream("GET", f"/api/projects/{_id(project)}/export/", params=params) as response:
            if not response.is_success:
                response.read()
                self._raise_for(response)
            with target.open("wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
        return target

    def export_dataset(self, project: ProjectRef, *, format: str = "dpo", **filters: Any) -> Dataset:
        """The export as a ``datasets.Dataset`` (needs the datasets package)."""
        from datasets import Dataset

        with tempfile.TemporaryDirectory() as folder:
            path = self.export(project, Path(folder) / f"{format}.jsonl", format=format, **filters)
            if path.stat().st_size == 0:
                return Dataset.from_list([])
            # Loaded into memory before the folder goes, so the dataset does not point at a deleted file.
            return Dataset.from_json(str(path), keep_in_memory=True)
