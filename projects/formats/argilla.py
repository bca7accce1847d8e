"""Argilla 2.x records as exported by ``dataset.records.to_json(path)`` (a JSON array) or written one a line.

A record is ``{"id", "status", "fields": {...}, "metadata": {...}, "responses": {question: [{"value", "user_id",
"status"}]}}``. The item is the record: its prompt the field ``prompt`` (or ``instruction`` / ``question`` /
``text``), its responses the fields response1/response2 (or response_1/…, reply-1/…, answer1/…, response_a/…), or
else every other field in order. Only ``submitted`` responses are labels. A ranking question (``value`` the field
names best first, or ``[{"value", "rank"}]``) gives a binary label for the top-ranked response (a tie when several
share rank 1); a rating question asked over the pair (``value`` an integer) is the side-by-side Likert point.
"""

from __future__ import annotations

from typing import IO, Any

from projects.formats.common import (
    TIE,
    Converted,
    Judgment,
    RecordInvalid,
    Source,
    label_row,
    read_records,
    text_field,
    whole,
)

TOOL = "Argilla"
PROMPT_KEYS = ("prompt", "instruction", "question", "text")
PAIRS = (
    ("response1", "response2"),
    ("response_1", "response_2"),
    ("reply-1", "reply-2"),
    ("answer1", "answer2"),
    ("response_a", "response_b"),
)


def _records(handle: IO[bytes]) -> list[tuple[Source, dict[str, Any] | RecordInvalid]]:
    found: list[tuple[Source, dict[str, Any] | RecordInvalid]] = []
    for number, name, record in read_records(handle, what="record"):
        if isinstance(record, RecordInvalid):
            found.append((Source(number, name), record))
        elif not isinstance(record, dict) or not isinstance(record.get("fields"), dict):
            found.append((Source(number, name), RecordInvalid(f"{TOOL} record must have a 'fields' object")))
        elif record.get("id") is None:
            found.append((Source(number, name), RecordInvalid(f"{TOOL} record has no 'id'")))
        else:
            found.append((Source(number, f"{name} (id {record['id']})"), record))
    return found


def _response_keys(fields: dict[str, Any]) -> list[str]:
    for pair in PAIRS:
        if all(isinstance(fields.get(key), str) for key in pair):
            return list(pair)
    rest = [k for k, v in fields.items() if k not in PROMPT_KEYS and isinstance(v, str)]
    if len(rest) < 2:
        raise RecordInvalid(f"{TOOL} record has fewer than two response fields besides the prompt")
    return rest


def items(handle: IO[bytes]) -> Converted:
    out = Converted()
    for source, record in _records(handle):
        try:
            if isinstance(record, RecordInvalid):
                raise record
            fields = record["fields"]
            metadata = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
            row = {
                "id": str(record["id"]),
                "prompt": text_field(fields, PROMPT_KEYS, "prompt field"),
                "responses": [fields[key] for key in _response_keys(fields)],
                "metadata": {**metadata, "source": "argilla"},
            }
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out


def _top_ranked(value: Any, keys: list[str]) -> int | str:
    if not isinstance(value, list) or not value:
        raise RecordInvalid(f"{TOOL} ranking must be a non-empty list, not {value!r}")
    if all(isinstance(v, str) for v in value):
        ranked = [(rank, name) for rank, name in enumerate(value, start=1)]
    elif all(isinstance(v, dict) and "value" in v and "rank" in v for v in value):
        ranked = [(whole(v["rank"], f"{TOOL} rank"), v["value"]) for v in value]
    else:
        raise RecordInvalid(f"{TOOL} ranking must list field names or {{'value', 'rank'}} objects")
    unknown = [name for _, name in ranked if name not in keys]
    if unknown:
        raise RecordInvalid(f"{TOOL} ranking names {unknown[0]!r}, which is not a response field ({', '.join(keys)})")
    best = min(rank for rank, _ in ranked)
    top = [keys.index(name) for rank, name in ranked if rank == best]
    return top[0] if len(top) == 1 else TIE


def _record_labels(record: dict[str, Any], mode: str, likert_points: int) -> list[dict[str, Any]]:
    keys = _response_keys(record["fields"])
    questions = record.get("responses") or {}
    if not isinstance(questions, dict):
        raise RecordInvalid(f"{TOOL} 'responses' must map each question to a list of answers")
    kind = "ranking" if mode == "binary" else "rating"
    rows = []
    answered = False
    for question, answers in questions.items():
        if not isinstance(answers, list):
            raise RecordInvalid(f"{TOOL} responses to {question!r} must be a list")
        for answer in answers:
            if not isinstance(answer, dict) or answer.get("status", "submitted") != "submitted":
                continue
            value = answer.get("value")
            is_ranking = isinstance(value, list)
            if is_ranking != (kind == "ranking"):
                continue
            user = answer.get("user_id")
            if user is None or not str(user).strip():
                raise RecordInvalid(f"{TOOL} answer to {question!r} has no 'user_id'")
            base: dict[str, Any] = {"item": str(record["id"]), "annotator": str(user)}
            if is_ranking:
                judgment = Judgment(choice=_top_ranked(value, keys), **base)
            else:
                judgment = Judgment(scale=whole(value, f"{TOOL} rating of {question!r}"), **base)
            rows.append(label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL))
            answered = True
    if not answered and any(isinstance(a, list) and a for a in questions.values()):
        raise RecordInvalid(f"{TOOL} record has no submitted {kind} response (a {mode} project takes {kind}s)")
    return rows


def labels(handle: IO[bytes], *, mode: str, likert_points: int) -> Converted:
    out = Converted()
    for source, record in _records(handle):
        try:
            if isinstance(record, RecordInvalid):
                raise record
            if mode not in ("binary", "likert"):
                raise RecordInvalid(f"{TOOL} rankings and ratings go into a binary or Likert project (this is {mode})")
            rows = _record_labels(record, mode, likert_points)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.extend((source, row) for row in rows)
    return out
