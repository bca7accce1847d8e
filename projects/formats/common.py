"""What every converter shares: the lead's options, reading records, and turning a judgment into a label row.

Converters are pure: they read a file and return Penumbra's native rows (the JSON Lines that
projects.imports.items and annotation.imports.labels accept), each tagged with where it came from, so that an error the
native import finds later can still name the record of the original file. Nothing here touches the database.

Everything a tool's record carries besides the prompt, the responses and their models goes to the item's lead-only
metadata (``lead_metadata``): annotators and participants receive nothing from an import but prompt and responses.
The record's own columns keep their names and values; what a converter adds about the tool's structure (Label
Studio's task ``meta``, Argilla suggestions it cannot use) goes under one key of its own, ``_import``, which never
replaces a column (``lead_only``).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

TIE = "tie"
RATINGS_RULES = ("refuse", "binary", "likert")
RESPONSE_STATUSES = ("submitted", "draft", "discarded", "unknown")
IMPORT_KEY = "_import"


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


class OptionsInvalid(ValueError):
    """Options a lead gave that cannot be used: ``errors`` maps each option to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{name}: {message}" for name, message in errors.items()))


@dataclass(frozen=True)
class Options:
    """The lead's choices for reading another tool's file; the defaults never guess.

    ``scheme``: the annotation scheme (Potato), control (Label Studio ``from_name``) or question (Argilla) to read
    when a file holds several. ``ratings_rule``: how one rating per response becomes a label: ``refuse`` (the
    default), ``binary`` (the higher-rated response is preferred, equal ratings a tie) or ``likert`` (the middle
    point moved by the difference of the ratings, capped at the ends). ``statuses``: which Argilla responses count
    (``unknown`` for files that do not say, as ``to_json`` writes them). ``items_key``: the data key holding the
    responses (Potato's ``items_key``). ``scale``: the (min, max) of a Potato pairwise scale.
    """

    scheme: str | None = None
    ratings_rule: str = "refuse"
    statuses: tuple[str, ...] = ("submitted",)
    items_key: str | None = None
    scale: tuple[int, int] | None = None

    def ratings_note(self) -> str | None:
        return RATINGS_NOTES.get(self.ratings_rule)


OPTION_NAMES = ("scheme", "ratings_rule", "statuses", "items_key", "scale")
RATINGS_NOTES = {
    "binary": "Ratings of each response became binary labels: the higher-rated response is preferred, equal "
    "ratings a tie (ratings_rule=binary).",
    "likert": "Ratings of each response became Likert points: the middle point moved towards the higher-rated "
    "response by the difference of the ratings, rounded and capped at the ends (ratings_rule=likert).",
}


def options_from(raw: Mapping[str, Any]) -> Options:
    """Options from an import request or a job's saved options; OptionsInvalid names each bad one."""
    errors: dict[str, str] = {}
    scheme = raw.get("scheme") or None
    if scheme is not None and not isinstance(scheme, str):
        errors["scheme"] = "Expected the name of a scheme, control or question."
    items_key = raw.get("items_key") or None
    if items_key is not None and not isinstance(items_key, str):
        errors["items_key"] = "Expected the name of a data key."
    rule = raw.get("ratings_rule") or "refuse"
    if rule not in RATINGS_RULES:
        errors["ratings_rule"] = f"Expected one of {', '.join(RATINGS_RULES)}."
    statuses_raw = raw.get("statuses") or ("submitted",)
    if isinstance(statuses_raw, str):
        statuses_raw = [s.strip() for s in statuses_raw.split(",") if s.strip()]
    statuses = tuple(dict.fromkeys(statuses_raw)) if isinstance(statuses_raw, list | tuple) else ()
    if not statuses or any(s not in RESPONSE_STATUSES for s in statuses):
        errors["statuses"] = f"Expected some of {', '.join(RESPONSE_STATUSES)}."
    scale = None
    if raw.get("scale") not in (None, ""):
        try:
            scale = parse_scale(raw["scale"])
        except RecordInvalid as exc:
            errors["scale"] = str(exc)
    if errors:
        raise OptionsInvalid(errors)
    return Options(
        scheme=scheme,
        ratings_rule=rule,
        statuses=statuses,
        items_key=items_key,
        scale=scale,
    )


def parse_scale(value: Any) -> tuple[int, int]:
    """ "1..6", "-3..3" or [1, 6]: the lowest and highest point of a scale."""
    if isinstance(value, str) and ".." in value:
        low_text, high_text = value.split("..", 1)
        value = [low_text, high_text]
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = (whole(v, "a scale end") for v in value)
        if low < high:
            return low, high
    raise RecordInvalid(f"expected a scale as 'min..max' (e.g. 1..6 or -3..3), not {value!r}")


@dataclass
class Converted:
    """Native rows, each with the source record it came from; ``errors`` holds the records that were skipped.

    ``notes`` are sentences for the result report: how the file was read where the lead chose (a ratings rule).
    """

    rows: list[tuple[Source, dict[str, Any]]] = field(default_factory=list)
    errors: list[tuple[Source, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str | None) -> None:
        if text and text not in self.notes:
            self.notes.append(text)


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


def lead_only(columns: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The lead-only metadata of an item: the record's columns as they are, and what the converter adds under
    ``_import`` (or ``_import_`` …, should a column already have that name), so nothing is overwritten."""
    kept = dict(columns)
    extra = {k: v for k, v in (extra or {}).items() if v not in (None, {}, [])}
    if extra:
        key = IMPORT_KEY
        while key in kept:
            key += "_"
        kept[key] = extra
    return kept


def read_records(handle: IO[bytes], *, what: str) -> Iterator[tuple[int, str, Any]]:
    """(number, label, record) for a JSON array (numbered by position), one JSON object (pretty-printed or not) or
    JSON Lines (numbered by line).

    Bad JSON is yielded as a RecordInvalid in place of the record, so the caller reports it like any other bad
    record: once for a file that is one JSON document, per line for JSON Lines.
    """
    text = handle.read().decode("utf-8-sig", errors="replace")
    stripped = text.strip()
    if not stripped:
        return
    lines = [line for line in text.splitlines() if line.strip()]
    one_document = stripped.startswith("[") or (stripped.startswith("{") and not _parses(lines[0]))
    if one_document or len(lines) == 1:
        try:
            document = json.loads(stripped)
        except json.JSONDecodeError as exc:
            yield exc.lineno, f"line {exc.lineno}", RecordInvalid(f"not valid JSON: {exc.msg} (column {exc.colno})")
            return
        except RecursionError:
            yield 1, "line 1", RecordInvalid(DEPTH_MESSAGE)
            return
        if isinstance(document, list):
            for number, record in enumerate(document, start=1):
                yield number, f"{what} {number}", record
        else:
            yield 1, f"{what} 1", document
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, f"line {number}", json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"line {number}", RecordInvalid(f"not valid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:
            yield number, f"line {number}", RecordInvalid(DEPTH_MESSAGE)


DEPTH_MESSAGE = "JSON nested too deeply to read."


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def label_row(
    judgment: Judgment, *, mode: str, likert_points: int, tool: str, options: Options | None = None
) -> dict[str, Any]:
    """The native label row for a judgment in a project of ``mode``; RecordInvalid when the two do not fit.

    A choice is a binary label; a side-by-side scale point is a Likert label; ratings of each response become a label
    only by the rule the lead chose (``Options.ratings_rule``), never by default. Nothing is turned into IFS values:
    support and opposition cannot be read out of a choice or a rating without inventing the hesitation.
    """
    options = options or Options()
    row: dict[str, Any] = {"item": judgment.item, "annotator": judgment.annotator, "mode": mode}
    if judgment.time_spent_ms is not None:
        row["time_spent_ms"] = judgment.time_spent_ms
    if judgment.timestamp:
        row["timestamp"] = judgment.timestamp
    if judgment.ratings is not None:
        return {**row, **_from_ratings(judgment.ratings, mode, likert_points, tool, options.ratings_rule)}
    if judgment.choice is not None:
        if mode != "binary":
            raise RecordInvalid(
                f"{tool} gives a choice between the responses: import it into a binary project (this project is {mode})"
            )
        row["choice"] = judgment.choice
        return row
    if judgment.scale is not None:
        if mode != "likert":
            raise RecordInvalid(f"{tool} gives a side-by-side scale: import it into a Likert project (this is {mode})")
        if not 1 <= judgment.scale <= likert_points:
            raise RecordInvalid(f"scale point {judgment.scale} is outside this project's 1..{likert_points}")
        row["likert"] = judgment.scale
        return row
    raise RecordInvalid(f"{tool} record carries no judgment")


def _from_ratings(ratings: tuple[float, ...], mode: str, likert_points: int, tool: str, rule: str) -> dict[str, Any]:
    if rule == "refuse":
        raise RecordInvalid(
            f"{tool} gives one rating per response, not a comparison: choose how ratings become a label "
            "(ratings_rule=binary: the higher-rated response is preferred; ratings_rule=likert: a Likert point from "
            "the difference)"
        )
    if rule != mode:
        raise RecordInvalid(f"ratings_rule={rule} makes {rule} labels; this project is {mode}")
    if rule == "binary":
        best = max(ratings)
        top = [i for i, r in enumerate(ratings) if r == best]
        return {"choice": top[0] if len(top) == 1 else TIE}
    if len(ratings) != 2:
        raise RecordInvalid(f"a Likert point compares two responses; {tool} rates {len(ratings)}")
    if likert_points % 2 == 0:
        raise RecordInvalid(
            f"a {likert_points}-point scale has no middle point for equal ratings: use ratings_rule=binary"
        )
    half = likert_points // 2
    difference = ratings[1] - ratings[0]  # > 0: the second response is better, towards the top of the scale
    step = math.copysign(math.floor(abs(difference) + 0.5), difference)
    return {"likert": int(half + 1 + max(-half, min(half, step)))}


def text_field(record: dict[str, Any], keys: tuple[str, ...], what: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
    raise RecordInvalid(f"no {what} (looked for {', '.join(repr(k) for k in keys)})")


def number(value: Any, what: str) -> float:
    """A finite number, also from the strings some tools write ("4.5")."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordInvalid(f"{what} must be a number, not {value!r}")
    return float(value)


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
