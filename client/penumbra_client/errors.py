"""One exception for everything the server refuses, carrying its status and its own message."""

from __future__ import annotations

from typing import Any


class PenumbraError(Exception):
    """The server answered with an error: ``status`` (HTTP), ``detail`` and ``errors`` (field → messages)."""

    def __init__(self, status: int, detail: str, errors: dict[str, Any] | None = None) -> None:
        self.status = status
        self.detail = detail
        self.errors = errors or {}
        super().__init__(self._message())

    def _message(self) -> str:
        parts = [f"{self.status}: {self.detail}"]
        for name, messages in self.errors.items():
            texts = messages if isinstance(messages, list) else [messages]
            parts.append(f"{name}: {' '.join(str(m) for m in texts)}")
        return " ".join(parts) if len(parts) == 1 else f"{parts[0]} ({'; '.join(parts[1:])})"


class JobFailed(PenumbraError):
    """A background job (import, export, suggestions) ended as failed; ``rows`` are its errors by line."""

    def __init__(self, job: Any) -> None:
        self.job = job
        self.rows: list[dict[str, Any]] = list(job.errors)
        detail = str(job.result.get("detail") or f"job {job.id} failed")
        shown = "; ".join(f"line {e.get('line')}: {e.get('message')}" for e in self.rows[:10])
        more = f" (and {len(self.rows) - 10} more)" if len(self.rows) > 10 else ""
        super().__init__(200, f"{detail} {shown}{more}".strip())
