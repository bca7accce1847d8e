"""Label Studio's JSON export (a JSON array of tasks) of pairwise and rating projects.

A task is ``{"id", "data": {...}, "annotations": [{"completed_by", "result": [...], "was_cancelled", "lead_time",
"created_at"}]}``. The item is the task: its prompt is ``data.prompt`` (or ``question`` / ``instruction``) and its
two responses the first pair of data keys found among answer1/answer2, text1/text2, response1/response2,
response_a/response_b. A result of type ``pairwise`` (``{"selected": "left" | "right"}``) or ``choices`` (one choice
naming a side, "Answer 1" / "Response B" / a data key, or a tie) is a binary label; ``rating``
(``{"rating": k}``) given over the pair is the side-by-side scale, 1 = the first response strongly preferred.
Cancelled (skipped) annotations are left out. Errors name the task by its position in the array and its id.
"""

from __future__ import annotations

import re
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

TOOL = "Label Studio"
PROMPT_KEYS = ("prompt", "question", "instruction")
PAIRS = (("answer1", "answer2"), ("text1", "text2"), ("response1", "response2"), ("response_a", "response_b"))
TIES = {"tie", "equal", "same", "both", "neither", "no preference", "both equal"}


def _tasks(handle: IO[bytes]) -> list[tuple[Source, dict[str, Any] | RecordInvalid]]:
    found: list[tuple[Source, dict[str, Any] | RecordInvalid]] = []
    for number, name, task in read_records(handle, what="task"):
        if isinstance(task, RecordInvalid):
            found.append((Source(number, name), task))
        elif not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            found.append((Source(number, name), RecordInvalid(f"{TOOL} task must be an object with a 'data' object")))
        elif task.get("id") is None:
            found.append((Source(number, name), RecordInvalid(f"{TOOL} task has no 'id'")))
        else:
            found.append((Source(number, f"{name} (id {task['id']})"), task))
    return found


def _pair(data: dict[str, Any]) -> tuple[str, str]:
    for first, second in PAIRS:
        if isinstance(data.get(first), str) and isinstance(data.get(second), str):
            return first, second
    names = ", ".join("/".join(pair) for pair in PAIRS)
    raise RecordInvalid(f"{TOOL} task data has no pair of responses (looked for {names})")


def items(handle: IO[bytes]) -> Converted:
    out = Converted()
    for source, task in _tasks(handle):
        try:
            if isinstance(task, RecordInvalid):
                raise task
            data = task["data"]
            first, second = _pair(data)
            row = {
                "id": str(task["id"]),
                "prompt": text_field(data, PROMPT_KEYS, "prompt in the task data"),
                "responses": [data[first], data[second]],
                "metadata": {"source": "label-studio"},
            }
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out


def _annotator(annotation: dict[str, Any]) -> str:
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("username") or who.get("id")
    if who is None or (isinstance(who, str) and not who.strip()):
        raise RecordInvalid(f"{TOOL} annotation {annotation.get('id')} has no 'completed_by'")
    return f"label-studio-{who}" if isinstance(who, int) else str(who)


def _side(text: str, keys: tuple[str, str]) -> int | str:
    lowered = text.strip().lower()
    if lowered in TIES:
        return TIE
    for index, key in enumerate(keys):
        marks = ("left", "a", "1") if index == 0 else ("right", "b", "2")
        named = re.fullmatch(rf"\w+ ({marks[1]}|{marks[2]})|\w+{marks[2]}", lowered)  # "Answer 1", "response B"
        if lowered == key.lower() or lowered in marks or named:
            return index
    raise RecordInvalid(f"{TOOL} choice {text!r} names neither response (expected e.g. 'Answer 1', 'left' or 'tie')")


def _judgment(item: str, keys: tuple[str, str], annotation: dict[str, Any], mode: str) -> Judgment:
    results = annotation.get("result")
    if not isinstance(results, list):
        raise RecordInvalid(f"{TOOL} annotation {annotation.get('id')} has no 'result' list")
    by_type = {r.get("type"): r.get("value") or {} for r in results if isinstance(r, dict)}
    extra: dict[str, Any] = {"item": item, "annotator": _annotator(annotation)}
    if isinstance(annotation.get("lead_time"), int | float) and annotation["lead_time"] >= 0:
        extra["time_spent_ms"] = round(annotation["lead_time"] * 1000)
    if isinstance(annotation.get("created_at"), str):
        extra["timestamp"] = annotation["created_at"]
    choice_first = mode != "likert" or "rating" not in by_type
    if choice_first and "pairwise" in by_type:
        selected = by_type["pairwise"].get("selected")
        if selected not in ("left", "right"):
            raise RecordInvalid(f"{TOOL} pairwise result must select 'left' or 'right', not {selected!r}")
        return Judgment(choice=0 if selected == "left" else 1, **extra)
    if choice_first and "choices" in by_type:
        chosen = by_type["choices"].get("choices")
        if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
            raise RecordInvalid(f"{TOOL} choices result must hold exactly one choice, not {chosen!r}")
        return Judgment(choice=_side(chosen[0], keys), **extra)
    if "rating" in by_type:
        return Judgment(scale=whole(by_type["rating"].get("rating"), f"{TOOL} rating"), **extra)
    wanted = "'rating'" if mode == "likert" else "'choices' or 'pairwise'"
    raise RecordInvalid(f"{TOOL} task has no {wanted} result")


def labels(handle: IO[bytes], *, mode: str, likert_points: int) -> Converted:
    out = Converted()
    for source, task in _tasks(handle):
        rows: list[dict[str, Any]] = []
        try:
            if isinstance(task, RecordInvalid):
                raise task
            keys = _pair(task["data"])
            annotations = task.get("annotations") or []
            if not isinstance(annotations, list):
                raise RecordInvalid(f"{TOOL} 'annotations' must be a list")
            for annotation in annotations:
                if not isinstance(annotation, dict):
                    raise RecordInvalid(f"{TOOL} annotation must be an object")
                if annotation.get("was_cancelled"):
                    continue
                judgment = _judgment(str(task["id"]), keys, annotation, mode)
                rows.append(label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL))
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.extend((source, row) for row in rows)
    return out
