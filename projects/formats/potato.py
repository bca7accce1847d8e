"""Potato: its input data file for the items, its JSON Lines export (``python -m potato.export -f jsonl``) for labels.

Items (Potato's data file, one instance a line): ``{"id", "prompt" | "text", "responses": [a, b, ...]}`` (the
pairwise scheme's default ``items_key``) or ``{"id", "prompt" | "text", "left", "right"}``.

Labels (the export, one annotator × instance a line): ``{"instance_id", "user_id", "labels": {scheme: value}}``
(``id`` / ``label_annotations`` of older outputs are read too). Per scheme:
- pairwise, binary mode: ``{"selection": "A" | "B" | "tie"}``: a binary label;
- pairwise, scale mode: ``{"scale_value": "-2"}`` from -k (A much better) to +k (B much better): the side-by-side
  Likert point v + k + 1 of a project with 2k + 1 points;
- likert: ``{"scale_4": "4"}``: the Likert point 4 (the scale compares the pair, 1 = the first response preferred).
A line with several schemes uses the one named ``overall`` or ``preference``; Penumbra keeps one judgment per
annotator and item.
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

TOOL = "Potato"
PROMPT_KEYS = ("prompt", "text", "question", "instruction")
PREFERRED_SCHEMES = ("overall", "preference")
SELECTIONS: dict[str, int | str] = {"a": 0, "b": 1, "tie": TIE}


def items(handle: IO[bytes]) -> Converted:
    out = Converted()
    for number, name, record in read_records(handle, what="instance"):
        source = Source(number, name)
        try:
            if isinstance(record, RecordInvalid):
                raise record
            if not isinstance(record, dict):
                raise RecordInvalid(f"{TOOL} instance must be a JSON object")
            if record.get("id") is None:
                raise RecordInvalid(f"{TOOL} instance has no 'id'")
            responses = record.get("responses")
            if responses is None and "left" in record and "right" in record:
                responses = [record["left"], record["right"]]
            if not isinstance(responses, list) or len(responses) < 2:
                raise RecordInvalid(f"{TOOL} instance needs 'responses' (a list of 2 or more) or 'left' and 'right'")
            row = {
                "id": str(record["id"]),
                "prompt": text_field(record, PROMPT_KEYS, "prompt"),
                "responses": responses,
                "metadata": {"source": "potato"},
            }
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out


def _scheme(schemes: dict[str, Any]) -> tuple[str, Any]:
    if len(schemes) == 1:
        return next(iter(schemes.items()))
    for name in PREFERRED_SCHEMES:
        if name in schemes:
            return name, schemes[name]
    raise RecordInvalid(
        f"{TOOL} line has several schemes ({', '.join(sorted(schemes))}) and none named 'overall' or 'preference'"
    )


def _judgment(name: str, value: Any, likert_points: int, base: dict[str, Any]) -> Judgment:
    if not isinstance(value, dict) or not value:
        raise RecordInvalid(f"{TOOL} scheme {name!r} holds no answer")
    if "selection" in value:
        selection = str(value["selection"]).strip().lower()
        if selection not in SELECTIONS:
            raise RecordInvalid(f"{TOOL} pairwise selection {value['selection']!r} is not 'A', 'B' or 'tie'")
        return Judgment(choice=SELECTIONS[selection], **base)
    if "scale_value" in value:
        half = (likert_points - 1) // 2
        point = whole(value["scale_value"], f"{TOOL} scale_value")
        if likert_points % 2 == 0 or not -half <= point <= half:
            raise RecordInvalid(
                f"{TOOL} scale_value {point} does not fit this project's {likert_points}-point scale "
                f"(a scale from -k to k needs 2k + 1 points)"
            )
        return Judgment(scale=point + half + 1, **base)
    if len(value) == 1:
        label, point = next(iter(value.items()))
        if str(label).startswith("scale_"):
            return Judgment(scale=whole(point, f"{TOOL} Likert value"), **base)
    raise RecordInvalid(f"{TOOL} scheme {name!r} is neither pairwise nor Likert: {value!r}")


def labels(handle: IO[bytes], *, mode: str, likert_points: int) -> Converted:
    out = Converted()
    for number, name, record in read_records(handle, what="line"):
        source = Source(number, name)
        try:
            if isinstance(record, RecordInvalid):
                raise record
            if not isinstance(record, dict):
                raise RecordInvalid(f"{TOOL} line must be a JSON object")
            instance = record.get("instance_id", record.get("id"))
            user = record.get("user_id")
            if instance is None:
                raise RecordInvalid(f"{TOOL} line has no 'instance_id'")
            if not isinstance(user, str | int) or not str(user).strip():
                raise RecordInvalid(f"{TOOL} line has no 'user_id'")
            schemes = record.get("labels", record.get("label_annotations"))
            if not isinstance(schemes, dict) or not schemes:
                raise RecordInvalid(f"{TOOL} line has no 'labels'")
            scheme, value = _scheme(schemes)
            judgment = _judgment(scheme, value, likert_points, {"item": str(instance), "annotator": str(user)})
            row = label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out
