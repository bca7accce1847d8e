"""Label Studio's JSON export of pairwise and rating projects: a JSON array of tasks, one task object (pretty-printed
or not), or JSON Lines of tasks.

A task is ``{"id", "data": {...}, "meta": {...}, "annotations": [{"completed_by", "result": [...], "was_cancelled",
"lead_time", "created_at"}], ...}``. The item is the task: its prompt is ``data.prompt`` (or ``question`` /
``instruction``), its two responses the first pair of data keys found among answer1/answer2, text1/text2,
response1/response2, response_a/response_b, and their models the data keys model1/model2 (model_1/model_2,
model_a/model_b, or ``<response key>_model``). Every other data key, as it is, and the task's ``meta`` (under
``_import``) go to the lead-only metadata.

Labels: a result of type ``pairwise`` (``{"selected": "left" | "right"}``) or ``choices`` (one choice naming a side,
"Answer 1" / "Response B" / a data key, or a tie) is a binary label. ``rating`` results on each response
(``to_name`` a response key) are ratings of each response and become a label only by the lead's ``ratings_rule``;
one ``rating`` given over the pair (``to_name`` something else, or the control the lead names as ``scheme``) is the
side-by-side scale, 1 = the first response strongly preferred. ``scheme`` keeps the results of one control
(``from_name``) when a task has several. Cancelled (skipped) annotations are left out. Errors name the task by its
position and its id.
"""

from __future__ import annotations

import re
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

TOOL = "Label Studio"
PROMPT_KEYS = ("prompt", "question", "instruction")
PAIRS = (("answer1", "answer2"), ("text1", "text2"), ("response1", "response2"), ("response_a", "response_b"))
TIES = {"tie", "equal", "same", "both", "neither", "no preference", "both equal"}


def _tasks(handle: IO[bytes]) -> list[tuple[Source, dict[str, Any] | RecordInvalid]]:
    found: list[tuple[Source, dict[str, Any] | RecordInvalid]] = []
    for number_, name, task in read_records(handle, what="task"):
        if isinstance(task, RecordInvalid):
            found.append((Source(number_, name), task))
        elif not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            found.append((Source(number_, name), RecordInvalid(f"{TOOL} task must be an object with a 'data' object")))
        elif task.get("id") is None:
            found.append((Source(number_, name), RecordInvalid(f"{TOOL} task has no 'id'")))
        else:
            found.append((Source(number_, f"{name} (id {task['id']})"), task))
    return found


def _pair(data: dict[str, Any]) -> tuple[str, str]:
    for first, second in PAIRS:
        if isinstance(data.get(first), str) and isinstance(data.get(second), str):
            return first, second
    names = ", ".join("/".join(pair) for pair in PAIRS)
    raise RecordInvalid(f"{TOOL} task data has no pair of responses (looked for {names})")


def _model_keys(data: dict[str, Any], pair: tuple[str, str]) -> list[str | None]:
    keys: list[str | None] = []
    for index, key in enumerate(pair):
        names = (f"model{index + 1}", f"model_{index + 1}", ("model_a", "model_b")[index], f"{key}_model")
        keys.append(next((name for name in names if isinstance(data.get(name), str)), None))
    return keys


def items(handle: IO[bytes], *, options: Options | None = None) -> Converted:
    out = Converted()
    for source, task in _tasks(handle):
        try:
            if isinstance(task, RecordInvalid):
                raise task
            data = task["data"]
            pair = _pair(data)
            prompt_key = next((k for k in PROMPT_KEYS if isinstance(data.get(k), str) and data[k].strip()), None)
            prompt = text_field(data, PROMPT_KEYS, "prompt in the task data")
            models = _model_keys(data, pair)
            used = {prompt_key, *pair, *models}
            meta = task.get("meta") if isinstance(task.get("meta"), dict) else None
            row = {
                "id": str(task["id"]),
                "prompt": prompt,
                "responses": [
                    {"text": data[key], "model": data[model] if model else ""}
                    for key, model in zip(pair, models, strict=True)
                ],
                "lead_metadata": lead_only({k: v for k, v in data.items() if k not in used}, {"meta": meta}),
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


def _results(annotation: dict[str, Any], options: Options) -> list[dict[str, Any]]:
    results = annotation.get("result")
    if not isinstance(results, list):
        raise RecordInvalid(f"{TOOL} annotation {annotation.get('id')} has no 'result' list")
    results = [r for r in results if isinstance(r, dict)]
    if options.scheme:
        results = [r for r in results if r.get("from_name") == options.scheme]
        if not results:
            raise RecordInvalid(f"{TOOL} annotation {annotation.get('id')} has no result from {options.scheme!r}")
    return results


def _rating_judgment(
    ratings: list[dict[str, Any]], keys: tuple[str, str], options: Options, base: dict[str, Any]
) -> Judgment:
    per_response = {r.get("to_name"): (r.get("value") or {}).get("rating") for r in ratings if r.get("to_name") in keys}
    if len(per_response) == 2:
        values = tuple(number(per_response[key], f"{TOOL} rating of {key}") for key in keys)
        return Judgment(ratings=values, **base)
    if per_response and not options.scheme:
        (rated,) = per_response
        raise RecordInvalid(
            f"{TOOL} rating rates {rated!r} only: a rating of each response needs both; if this control is a "
            "side-by-side scale, name it as the scheme"
        )
    if len({r.get("from_name") for r in ratings}) > 1:
        names = ", ".join(sorted(str(r.get("from_name")) for r in ratings))
        raise RecordInvalid(f"{TOOL} annotation has several ratings ({names}): name the one to read as the scheme")
    return Judgment(scale=whole((ratings[0].get("value") or {}).get("rating"), f"{TOOL} rating"), **base)


def _judgment(item: str, keys: tuple[str, str], annotation: dict[str, Any], mode: str, options: Options) -> Judgment:
    by_type: dict[str, list[dict[str, Any]]] = {}
    for result in _results(annotation, options):
        by_type.setdefault(str(result.get("type")), []).append(result)
    base: dict[str, Any] = {"item": item, "annotator": _annotator(annotation)}
    if isinstance(annotation.get("lead_time"), int | float) and annotation["lead_time"] >= 0:
        base["time_spent_ms"] = round(annotation["lead_time"] * 1000)
    if isinstance(annotation.get("created_at"), str):
        base["timestamp"] = annotation["created_at"]
    choice_first = mode != "likert" or "rating" not in by_type
    if choice_first and "pairwise" in by_type:
        selected = (by_type["pairwise"][0].get("value") or {}).get("selected")
        if selected not in ("left", "right"):
            raise RecordInvalid(f"{TOOL} pairwise result must select 'left' or 'right', not {selected!r}")
        return Judgment(choice=0 if selected == "left" else 1, **base)
    if choice_first and "choices" in by_type:
        chosen = (by_type["choices"][0].get("value") or {}).get("choices")
        if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
            raise RecordInvalid(f"{TOOL} choices result must hold exactly one choice, not {chosen!r}")
        return Judgment(choice=_side(chosen[0], keys), **base)
    if "rating" in by_type:
        return _rating_judgment(by_type["rating"], keys, options, base)
    wanted = "'rating'" if mode == "likert" else "'choices', 'pairwise' or 'rating'"
    raise RecordInvalid(f"{TOOL} task has no {wanted} result")


def labels(handle: IO[bytes], *, mode: str, likert_points: int, options: Options | None = None) -> Converted:
    options = options or Options()
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
                judgment = _judgment(str(task["id"]), keys, annotation, mode, options)
                if judgment.ratings is not None:
                    out.note(options.ratings_note())
                rows.append(label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL, options=options))
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.extend((source, row) for row in rows)
    return out
