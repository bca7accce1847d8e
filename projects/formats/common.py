"""What every converter shares: reading records, naming them in errors, and turning a judgment into a label row.

Converters are pure: they read a file and return Penumbra's native rows (the JSON Lines that
projects.imports.items and annotation.imports.labels accept), each tagged with where it came from, so that an error the
native import finds later can still name the record of the original file. Nothing here touches the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

TIE = "tie"


@dataclass(frozen=True)
class Source:
    """Where a record was in the original file: its number (line, or position in a JSON array) and a name."""

    number: int
    name: str

    def __str__(self) -> str:
        return self.name

    def describe(self, message: str) -> str:
        """The message for an error report that already says "line N": add the name only when it says more."""
        return message if self.name == f"line {self.number}" else f"{self.name}: {message}"


class RecordInvalid(Exception):
    pass


@dataclass
class Converted:
    """Native rows, each with the source record it came from; ``errors`` holds the records that were skipped."""

    rows: list[tuple[Source, dict[str, Any]]] = field(default_factory=list)
    errors: list[tuple[Source, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Judgment:
    """One person's judgment of one pair, in the vocabulary the tools share.

    ``choice``: the preferred response's index or TIE; ``scale``: a point 1..k on a side-by-side scale (1 = the first
    response strongly preferred); ``ratings``: one absolute rating per response.
    """

    item: str
    annotator: str
    choice: int | str | None = None
    scale: int | None = None
    ratings: tuple[float, ...] | None = None
    time_spent_ms: int | None = None
    timestamp: str | None = None


def read_records(handle: IO[bytes], *, what: str) -> Iterator[tuple[int, str, Any]]:
    """(number, label, record) for a JSON array (numbered by position) or JSON Lines (numbered by line).

    Bad JSON on a line is yielded as a RecordInvalid in place of the record, so the caller reports it like any other
    bad record and goes on checking the rest.
    """
    text = handle.read().decode("utf-8-sig", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(stripped)
        except json.JSONDecodeError as exc:
            yield exc.lineno, f"line {exc.lineno}", RecordInvalid(f"not valid JSON: {exc.msg} (column {exc.colno})")
            return
        for number, record in enumerate(records, start=1):
            yield number, f"{what} {number}", record
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, f"line {number}", json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"line {number}", RecordInvalid(f"not valid JSON: {exc.msg} (column {exc.colno})")


def label_row(judgment: Judgment, *, mode: str, likert_points: int, tool: str) -> dict[str, Any]:
    """The native label row for a judgment in a project of ``mode``; RecordInvalid when the two do not fit.

    A choice is a binary label; a side-by-side scale point is a Likert label; per-response ratings become a binary
    label for the higher-rated response (a tie when equal), the preference they imply. Nothing is turned into IFS
    values: support and opposition cannot be read out of a choice or a rating without inventing the hesitation.
    """
    row: dict[str, Any] = {"item": judgment.item, "annotator": judgment.annotator, "mode": mode}
    if judgment.time_spent_ms is not None:
        row["time_spent_ms"] = judgment.time_spent_ms
    if judgment.timestamp:
        row["timestamp"] = judgment.timestamp
    if judgment.choice is not None or judgment.ratings is not None:
        what = "a choice between the responses" if judgment.choice is not None else "ratings of each response"
        if mode != "binary":
            raise RecordInvalid(f"{tool} gives {what}: import it into a binary project (this project is {mode})")
        choice = judgment.choice if judgment.choice is not None else _preferred_by_rating(judgment.ratings or ())
        row["choice"] = choice
        return row
    if judgment.scale is not None:
        if mode != "likert":
            raise RecordInvalid(f"{tool} gives a side-by-side scale: import it into a Likert project (this is {mode})")
        if not 1 <= judgment.scale <= likert_points:
            raise RecordInvalid(f"scale point {judgment.scale} is outside this project's 1..{likert_points}")
        row["likert"] = judgment.scale
        return row
    raise RecordInvalid(f"{tool} record carries no judgment")


def _preferred_by_rating(ratings: tuple[float, ...]) -> int | str:
    best = max(ratings)
    top = [i for i, r in enumerate(ratings) if r == best]
    return top[0] if len(top) == 1 else TIE


def text_field(record: dict[str, Any], keys: tuple[str, ...], what: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
    raise RecordInvalid(f"no {what} (looked for {', '.join(repr(k) for k in keys)})")


def whole(value: Any, what: str) -> int:
    """A whole number, also from the strings some tools write ("4", "-2")."""
    if isinstance(value, bool):
        raise RecordInvalid(f"{what} must be a whole number, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise RecordInvalid(f"{what} must be a whole number, not {value!r}")
