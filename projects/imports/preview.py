"""What a lead sees before an import writes anything: the file's format, its problems, its first rows as read.

- ``detect_format`` names the tool that wrote a file from its first record (Parquet by its magic bytes), with the
  reason, so the page can say "Label Studio (tasks with data and annotations)".
- ``file_problem`` finds what is wrong with the file as a whole, before any record is read: not UTF-8 (with the byte
  offset and line), and it turns the errors a converter or the JSON decoder raise on a broken file (invalid Parquet,
  nesting too deep) into a sentence that names the problem, instead of an unexpected failure.
- ``items_preview`` / ``labels_preview``: the first rows after conversion and the row checks: prompt, responses with
  their models, gold, suggestion, what stays visible and what goes to lead-only metadata; for labels, who and what.

Pure reading: nothing here writes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import IO, Any

from config.input_limits import DEPTH_MESSAGE
from projects.formats import NATIVE, convert_items, convert_labels
from projects.formats.common import Converted, Source
from projects.imports.formats import format_options
from projects.imports.rows import NATIVE_FIELDS, TRL_FIELDS, RowInvalid, parse_row
from projects.models import TIE, Project

AUTO = "auto"
PARQUET_MAGIC = b"PAR1"
HEAD_BYTES = 1024 * 1024
PREVIEW_ROWS = 5
TEXT_SHOWN = 400


class FileProblem(Exception):
    """The file cannot be read at all; the message says why and where."""

    def __init__(self, message: str, *, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def _first_record(head: bytes) -> Any:
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if text.startswith("["):
        text = text[1:].lstrip()
    try:
        record, _ = json.JSONDecoder().raw_decode(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return record


def detect_format(head: bytes, *, labels: bool) -> tuple[str, str]:
    """(format, why) for a file starting with ``head``; native when nothing else fits (its checks name the rows)."""
    if head[:4] == PARQUET_MAGIC:
        return "hf", "a Parquet file (a Hugging Face dataset)"
    record = _first_record(head)
    if not isinstance(record, dict):
        return NATIVE, "Penumbra's own JSON Lines (the first record is not a JSON object)"
    keys = set(record)
    if isinstance(record.get("data"), dict):
        return "label-studio", "Label Studio tasks (records with a data object)"
    if isinstance(record.get("fields"), dict):
        return "argilla", "Argilla records (records with fields)"
    if "instance_id" in keys or ("text" in keys and "prompt" not in keys and "responses" in keys):
        return "potato", "Potato (instance ids or a data file with text and responses)"
    if labels and {"item", "annotator"} <= keys:
        return NATIVE, "Penumbra's own label rows (item, annotator, mode)"
    if not labels and (keys <= NATIVE_FIELDS or keys <= TRL_FIELDS):
        return NATIVE, "Penumbra's own item rows (prompt and responses, or TRL's prompt, chosen, rejected)"
    if {"chosen", "rejected"} <= keys or {"chosen_rating", "rejected_rating"} & keys:
        return "hf", "a Hugging Face preference dataset (chosen and rejected columns)"
    return NATIVE, "Penumbra's own JSON Lines (no other tool's shape matched)"


def resolve_format(fmt: str, head: bytes, *, labels: bool) -> tuple[str, str]:
    if fmt != AUTO:
        return fmt, "chosen by the lead"
    return detect_format(head, labels=labels)


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def check_encoding(data: bytes) -> None:
    """Penumbra reads text files as UTF-8 (with or without a BOM); FileProblem names the first byte that is not."""
    if data[:4] == PARQUET_MAGIC:
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FileProblem(
            f"The file is not UTF-8 text: byte 0x{data[exc.start]:02x} at byte offset {exc.start} (line {line}, "
            f"byte {column} of the line) is not valid UTF-8. Penumbra expects UTF-8; save or export the file as "
            "UTF-8 (e.g. iconv -f latin1 -t utf-8) and upload it again.",
            line=line,
        ) from None


def converted_safely(convert: Callable[[IO[bytes]], Converted], data: bytes, fmt: str) -> Converted:
    """Run a converter on the whole file, turning a broken file into a FileProblem that names what is wrong."""
    try:
        return convert(io.BytesIO(data))
    except RecursionError:
        raise FileProblem(f"The file is nested too deeply to read: {DEPTH_MESSAGE}") from None
    except UnicodeDecodeError as exc:
        raise FileProblem(f"The file is not UTF-8 text at byte offset {exc.start}: {exc.reason}.") from None
    except Exception as exc:
        if data[:4] == PARQUET_MAGIC or is_arrow_error(exc):
            raise FileProblem(f"The file is not a valid Parquet file: {exc}") from None
        raise


def is_arrow_error(exc: Exception) -> bool:
    return type(exc).__module__.startswith("pyarrow")


def _short(text: str) -> str:
    return text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN] + "…"


def _position_name(position: int | None) -> str | None:
    if position is None:
        return None
    return "tie" if position == TIE else f"Response {position + 1}"


def items_preview(
    *,
    project: Project,
    fmt: str,
    data: bytes,
    limit: int = PREVIEW_ROWS,
    reading: Mapping[str, Any] | None = None,
    trl_chosen_as: str = "gold",
) -> list[dict[str, Any]]:
    """The first ``limit`` records as the item import reads them (a bad record shows its error instead)."""
    if fmt == NATIVE:
        text = data.decode("utf-8-sig", errors="replace")
        numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()][:limit]
        records: list[tuple[str, str | RowInvalid]] = [(f"line {n}", line) for n, line in numbered]
    else:
        options = format_options(reading)
        converted = converted_safely(
            lambda h: convert_items(fmt, h, options=options, seed=project.seed, trl_chosen_as=trl_chosen_as), data, fmt
        )
        shown: list[tuple[Source, Any]] = sorted(
            [*converted.rows, *[(s, RowInvalid(m)) for s, m in converted.errors]], key=lambda r: r[0].number
        )[:limit]
        records = [
            (source.name, row if isinstance(row, RowInvalid) else json.dumps(row, ensure_ascii=False))
            for source, row in shown
        ]
    preview: list[dict[str, Any]] = []
    for number, (record, row) in enumerate(records, start=1):
        if isinstance(row, RowInvalid):
            preview.append({"record": record, "error": str(row)})
            continue
        try:
            parsed = parse_row(line=number, text=row, project=project, trl_chosen_as="gold")
        except RowInvalid as exc:
            preview.append({"record": record, "error": str(exc)})
            continue
        preview.append(
            {
                "record": record,
                "id": parsed.external_id,
                "prompt": _short(parsed.prompt),
                "responses": [
                    {"position": p, "name": f"Response {p + 1}", "model": model, "text": _short(text)}
                    for p, (text, model) in enumerate(parsed.responses)
                ],
                "gold": _position_name(parsed.gold),
                "suggestion": None
                if parsed.suggestion is None
                else {
                    "preferred": _position_name(parsed.suggestion["preferred"]),
                    "model": parsed.suggestion["model"],
                },
                "metadata": sorted(parsed.metadata),
                "lead_metadata": sorted(parsed.lead_metadata),
            }
        )
    return preview


def _label_summary(row: dict[str, Any]) -> str:
    if "choice" in row:
        choice = row["choice"]
        return "tie" if choice in ("tie", TIE) else f"prefers Response {int(choice) + 1}"
    if "likert" in row:
        return f"Likert {row['likert']}"
    values = row.get("values") or []
    return "IFS " + ", ".join(
        f"R{v.get('position', 0) + 1} μ {v.get('mu')} ν {v.get('nu')}" for v in values if isinstance(v, dict)
    )


def labels_preview(
    *,
    project: Project,
    fmt: str,
    data: bytes,
    limit: int = PREVIEW_ROWS,
    reading: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The first ``limit`` label rows as the label import reads them: item, annotator as the file names them, label."""
    if fmt == NATIVE:
        text = data.decode("utf-8-sig", errors="replace")
        rows: list[tuple[str, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((f"line {number}", json.loads(line)))
            except (json.JSONDecodeError, RecursionError) as exc:
                rows.append((f"line {number}", RowInvalid(f"not valid JSON ({exc})")))
            if len(rows) >= limit:
                break
    else:
        converted = converted_safely(
            lambda h: convert_labels(
                fmt,
                h,
                mode=project.mode,
                likert_points=project.likert_points,
                seed=project.seed,
                options=format_options(reading),
            ),
            data,
            fmt,
        )
        both: list[tuple[Source, Any]] = [*converted.rows, *[(s, RowInvalid(m)) for s, m in converted.errors]]
        rows = [(source.name, row) for source, row in sorted(both, key=lambda r: r[0].number)[:limit]]
    preview: list[dict[str, Any]] = []
    for record, row in rows:
        if isinstance(row, RowInvalid) or not isinstance(row, dict):
            preview.append({"record": record, "error": str(row) if isinstance(row, RowInvalid) else "not an object"})
            continue
        preview.append(
            {
                "record": record,
                "item": str(row.get("item", "")),
                "annotator": str(row.get("annotator", "")),
                "label": _label_summary(row),
            }
        )
    return preview
