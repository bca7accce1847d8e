"""Hugging Face preference datasets in TRL's columns, as JSON Lines or Parquet (``dataset.to_json`` /
``dataset.to_parquet``).

Items: ``prompt``, ``chosen``, ``rejected`` (texts, or chat messages ``[{"role", "content"}]``), with ``id`` or
``prompt_id`` when the dataset has one (else an id hashed from the content, the same on every import). They go
through the TRL path of the item import: the chosen answer's position is drawn from the project seed and the
preference becomes gold (or the suggestion, or nothing: ``trl_chosen_as``). Other columns are kept as metadata.

Labels: ``chosen_rating`` and ``rejected_rating`` (UltraFeedback-style scores) give a binary label for the
higher-rated answer, a tie when equal, by the annotator named in an ``annotator`` column or ``hf-dataset``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterator
from typing import IO, Any

from projects.blind import trl_chosen_first
from projects.formats.common import Converted, Judgment, RecordInvalid, Source, label_row, read_records

TOOL = "Hugging Face dataset"
TRL_COLUMNS = ("prompt", "chosen", "rejected")
ID_COLUMNS = ("id", "prompt_id")
RATING_COLUMNS = ("chosen_rating", "rejected_rating")
DEFAULT_ANNOTATOR = "hf-dataset"
PARQUET_MAGIC = b"PAR1"


def _rows(handle: IO[bytes]) -> Iterator[tuple[int, str, Any]]:
    data = handle.read()
    if data[:4] == PARQUET_MAGIC:
        import pyarrow.parquet as pq  # comes with datasets; only Parquet uploads need it

        table = pq.read_table(io.BytesIO(data))
        for number, row in enumerate(table.to_pylist(), start=1):
            yield number, f"row {number}", row
        return
    yield from read_records(io.BytesIO(data), what="row")


def external_id(row: dict[str, Any]) -> str:
    for column in ID_COLUMNS:
        value = row.get(column)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    content = json.dumps([row.get(c) for c in TRL_COLUMNS], sort_keys=True, ensure_ascii=False)
    return "hf-" + hashlib.sha1(content.encode()).hexdigest()[:16]


def _checked(record: Any) -> dict[str, Any]:
    if isinstance(record, RecordInvalid):
        raise record
    if not isinstance(record, dict):
        raise RecordInvalid(f"{TOOL} row must be an object")
    missing = [c for c in TRL_COLUMNS if record.get(c) in (None, "", [])]
    if missing:
        raise RecordInvalid(f"{TOOL} row has no {', '.join(repr(c) for c in missing)} (TRL columns are required)")
    return record


def items(handle: IO[bytes]) -> Converted:
    out = Converted()
    for number, name, record in _rows(handle):
        source = Source(number, name)
        try:
            row = _checked(record)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        extra = {k: v for k, v in row.items() if k not in (*TRL_COLUMNS, *ID_COLUMNS)}
        native = {k: row[k] for k in TRL_COLUMNS}
        out.rows.append((source, {"id": external_id(row), **native, "metadata": {**extra, "source": "hf"}}))
    return out


def _rating(value: Any, column: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordInvalid(f"{TOOL} {column} must be a number, not {value!r}")
    return float(value)


def labels(handle: IO[bytes], *, mode: str, likert_points: int, seed: int) -> Converted:
    out = Converted()
    for number, name, record in _rows(handle):
        source = Source(number, name)
        try:
            row = _checked(record)
            if any(row.get(c) is None for c in RATING_COLUMNS):
                raise RecordInvalid(
                    f"{TOOL} row has no chosen_rating/rejected_rating: without ratings its preference is the "
                    "items' gold (import it as items)"
                )
            chosen, rejected = (_rating(row[c], c) for c in RATING_COLUMNS)
            item = external_id(row)
            ratings = (chosen, rejected) if trl_chosen_first(seed=seed, external_id=item) else (rejected, chosen)
            annotator = str(row.get("annotator") or DEFAULT_ANNOTATOR)
            judgment = Judgment(item=item, annotator=annotator, ratings=ratings)
            native = label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, native))
    return out
