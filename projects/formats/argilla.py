"""Argilla 2.x records: ``dataset.records.to_json(path)`` (a JSON array of nested records), or ``to_list()`` written
as JSON (nested, or ``flatten=True``), or one record a line.

Nested: ``{"id", "fields": {...}, "metadata": {...}, "suggestions": {question: {"value", "score", "agent"}},
"responses": {question: [{"value", "user_id"[, "status"]}]}, "vectors", "status", "_server_id"}``. Flattened: the
fields and metadata at the top, ``<question>.responses`` / ``.responses.users`` / ``.responses.status`` lists and
``<question>.suggestion`` / ``.suggestion.agent`` / ``.suggestion.score``.

Items: the prompt is the field ``prompt`` (or ``instruction`` / ``question`` / ``text``), the responses the fields
response1/response2 (response_1/…, reply-1/…, answer1/…, response_a/…, generations-0/…), or else every other text
field in order. The record's metadata goes, as it is, to the lead-only metadata, with vectors and the suggestions
Penumbra cannot read under ``_import``. A ranking suggestion (or a label suggestion naming a response field) becomes
the item's suggestion, with its agent as the model.

Labels: which responses count is the lead's choice (``statuses``; ``submitted`` by default). ``to_json`` writes no
status for a response: such responses have the status ``unknown`` and count only when the lead includes it. A
ranking question gives a binary label for the top-ranked response (a tie when several share rank 1); a rating
question over the pair is the side-by-side Likert point; rating questions on each response (``<field>-rating``, as
distilabel names them) are ratings of each response and become a label by the lead's ``ratings_rule``. ``scheme``
names the question to read when there are several.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

from projects.formats.common import (
    TIE,
    Converted,
    Judgment,
    Options,
    RecordInvalid,
    Source,
    label_row,
    lead_only,
    number,
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
    ("generations-0", "generations-1"),
)
RECORD_KEYS = {"id", "fields", "metadata", "suggestions", "responses", "vectors", "status", "_server_id", "score"}
FLAT_SUFFIXES = (".responses", ".responses.users", ".responses.status", ".suggestion", ".suggestion.agent",
                 ".suggestion.score")  # fmt: skip


def _nested(record: dict[str, Any]) -> dict[str, Any]:
    """A flattened record (``to_list(flatten=True)``) in the nested shape; a nested one as it is."""
    if isinstance(record.get("fields"), dict):
        return record
    questions = {key[: -len(suffix)] for key in record for suffix in FLAT_SUFFIXES if key.endswith(suffix)}
    flat = {key for key in record if any(key == q + s for q in questions for s in FLAT_SUFFIXES)}
    fields = {k: v for k, v in record.items() if k not in RECORD_KEYS and k not in flat}
    responses: dict[str, list[dict[str, Any]]] = {}
    suggestions: dict[str, dict[str, Any]] = {}
    for question in sorted(questions):
        values = record.get(f"{question}.responses")
        if isinstance(values, list):
            users = record.get(f"{question}.responses.users") or [None] * len(values)
            statuses = record.get(f"{question}.responses.status") or [None] * len(values)
            responses[question] = [
                {"value": v, "user_id": u, "status": s} for v, u, s in zip(values, users, statuses, strict=False)
            ]
        if record.get(f"{question}.suggestion") is not None:
            suggestions[question] = {
                "value": record[f"{question}.suggestion"],
                "agent": record.get(f"{question}.suggestion.agent"),
                "score": record.get(f"{question}.suggestion.score"),
            }
    # Flattened records mix fields and metadata: all but the prompt and the responses are kept as metadata.
    return {"id": record.get("id"), "fields": fields, "metadata": {}, "responses": responses,
            "suggestions": suggestions, "vectors": record.get("vectors"), "status": record.get("status")}  # fmt: skip


def _records(handle: IO[bytes]) -> Iterator[tuple[Source, dict[str, Any] | RecordInvalid]]:
    for number_, name, record in read_records(handle, what="record"):
        if isinstance(record, RecordInvalid):
            yield Source(number_, name), record
        elif not isinstance(record, dict):
            yield Source(number_, name), RecordInvalid(f"{TOOL} record must be an object")
        elif record.get("id") is None:
            yield Source(number_, name), RecordInvalid(f"{TOOL} record has no 'id'")
        else:
            yield Source(number_, f"{name} (id {record['id']})"), _nested(record)


def _response_keys(fields: dict[str, Any]) -> list[str]:
    for pair in PAIRS:
        if all(isinstance(fields.get(key), str) for key in pair):
            return list(pair)
    rest = [k for k, v in fields.items() if k not in (*PROMPT_KEYS, "id") and isinstance(v, str)]
    if len(rest) < 2:
        raise RecordInvalid(f"{TOOL} record has fewer than two response fields besides the prompt")
    return rest


def _preferred(value: Any, keys: list[str]) -> int | str | None:
    """The response a ranking (or a label naming a response field) prefers; None for other kinds of question."""
    if isinstance(value, list) and value:
        return _top_ranked(value, keys)
    if isinstance(value, str) and value in keys:
        return keys.index(value)
    return None


def _suggestion(
    record: dict[str, Any], keys: list[str], options: Options
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    suggestions = record.get("suggestions")
    if not isinstance(suggestions, dict):
        suggestions = {}
    kept: dict[str, Any] = {}
    chosen = None
    for question, suggestion in suggestions.items():
        if not isinstance(suggestion, dict):
            continue
        usable = chosen is None and (not options.scheme or question == options.scheme)
        preferred = _preferred(suggestion.get("value"), keys) if usable else None
        if preferred is None:
            kept[question] = suggestion
            continue
        agent = suggestion.get("agent")
        chosen = {"preferred": preferred, "model": str(agent) if agent else "", "rationale": ""}
    return chosen, kept


def items(handle: IO[bytes], *, options: Options | None = None) -> Converted:
    options = options or Options()
    out = Converted()
    for source, record in _records(handle):
        try:
            if isinstance(record, RecordInvalid):
                raise record
            fields = record["fields"]
            keys = _response_keys(fields)
            prompt = text_field(fields, PROMPT_KEYS, "prompt field")
            prompt_key = next(k for k in PROMPT_KEYS if fields.get(k) == prompt)
            suggestion, other_suggestions = _suggestion(record, keys, options)
            metadata = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
            other_fields = {k: v for k, v in fields.items() if k not in {prompt_key, *keys}}
            row: dict[str, Any] = {
                "id": str(record["id"]),
                "prompt": prompt,
                "responses": [fields[key] for key in keys],
                "lead_metadata": lead_only(
                    {**other_fields, **metadata},
                    {"suggestions": other_suggestions, "vectors": record.get("vectors")},
                ),
            }
            if suggestion is not None:
                row["suggestion"] = suggestion
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


def _per_response_field(question: str, keys: list[str]) -> str | None:
    """The response field a rating question rates, by distilabel's naming (``generations-1-rating``)."""
    match = re.fullmatch(r"(.+?)[-_.]?rating", question)
    return match.group(1) if match and match.group(1) in keys else None


def _counted(answers: Any, question: str, options: Options) -> list[dict[str, Any]]:
    if not isinstance(answers, list):
        raise RecordInvalid(f"{TOOL} responses to {question!r} must be a list")
    counted = []
    for answer in answers:
        if not isinstance(answer, dict):
            raise RecordInvalid(f"{TOOL} response to {question!r} must be an object")
        status = answer.get("status") or "unknown"
        if status in options.statuses:
            user = answer.get("user_id")
            if user is None or not str(user).strip():
                raise RecordInvalid(f"{TOOL} response to {question!r} has no 'user_id'")
            counted.append(answer)
    return counted


def _record_judgments(record: dict[str, Any], options: Options, kind: str) -> list[Judgment]:
    keys = _response_keys(record["fields"])
    questions = record.get("responses") or {}
    if not isinstance(questions, dict):
        raise RecordInvalid(f"{TOOL} 'responses' must map each question to a list of answers")
    if options.scheme:
        questions = {q: a for q, a in questions.items() if q == options.scheme}
    item = str(record["id"])
    judgments: list[Judgment] = []
    per_response: dict[str, dict[str, float]] = {}  # user → response field → rating
    pair_questions = set()
    for question, answers in questions.items():
        rated_field = _per_response_field(question, keys)
        for answer in _counted(answers, question, options):
            user, value = str(answer["user_id"]), answer.get("value")
            if rated_field is not None:
                per_response.setdefault(user, {})[rated_field] = number(value, f"{TOOL} rating of {rated_field}")
            elif kind == "ranking" and (choice := _preferred(value, keys)) is not None:
                judgments.append(Judgment(item=item, annotator=user, choice=choice))
                pair_questions.add(question)
            elif kind == "rating" and isinstance(value, int | float) and not isinstance(value, bool):
                judgments.append(
                    Judgment(item=item, annotator=user, scale=whole(value, f"{TOOL} rating of {question!r}"))
                )
                pair_questions.add(question)
    if len(pair_questions) > 1:
        raise RecordInvalid(
            f"{TOOL} record answers several questions ({', '.join(sorted(pair_questions))}): name one as the scheme"
        )
    for user, ratings in per_response.items():
        if set(ratings) != set(keys):
            missing = ", ".join(k for k in keys if k not in ratings)
            raise RecordInvalid(f"{TOOL} response of {user} rates some responses but not {missing}")
        judgments.append(Judgment(item=item, annotator=user, ratings=tuple(ratings[k] for k in keys)))
    return judgments


def labels(handle: IO[bytes], *, mode: str, likert_points: int, options: Options | None = None) -> Converted:
    options = options or Options()
    out = Converted()
    kind = "ranking" if mode == "binary" else "rating"
    for source, record in _records(handle):
        try:
            if isinstance(record, RecordInvalid):
                raise record
            if mode not in ("binary", "likert"):
                raise RecordInvalid(f"{TOOL} rankings and ratings go into a binary or Likert project (this is {mode})")
            judgments = _record_judgments(record, options, kind)
            if any(j.ratings is not None for j in judgments):
                out.note(options.ratings_note())
            rows = [label_row(j, mode=mode, likert_points=likert_points, tool=TOOL, options=options) for j in judgments]
            if not rows and _has_answers(record):
                statuses = ", ".join(options.statuses)
                raise RecordInvalid(
                    f"{TOOL} record has no {kind} response with status {statuses} (a {mode} project takes {kind}s; "
                    "to_json writes no status: count such responses with statuses=unknown)"
                )
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.extend((source, row) for row in rows)
    return out


def _has_answers(record: dict[str, Any]) -> bool:
    questions = record.get("responses") or {}
    return isinstance(questions, dict) and any(isinstance(a, list) and a for a in questions.values())
