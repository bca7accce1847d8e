"""Potato: its input data file for the items, its JSON Lines export (``python -m potato.export -f jsonl``) for labels.

Items (Potato's data file, one instance a line): ``{"id", "prompt" | "text" | …, <items_key>: [a, b]}``. The
pairwise scheme reads its two responses from the instance key named by the config's ``items_key`` (Potato's default
is ``text``); the lead gives it as the ``items_key`` option, else ``responses``, then ``text`` are tried, then
``left``/``right``. The prompt is ``prompt`` (or ``question`` / ``instruction``, or ``text`` when ``text`` is not
the responses). Every other key of the instance goes, as it is, to the lead-only metadata.

Labels (the export, one annotator × instance a line): ``{"instance_id", "user_id", "labels": {scheme: {label: value}}}``
(``id`` / ``label_annotations`` of older outputs are read too). Per scheme:
- pairwise, binary mode: ``{"selection": "A" | "B" | "tie"}``: a binary label;
- pairwise, scale mode: ``{"scale_value": "2"}``, a point of the scheme's scale from min (A much better) to max (B
  much better). Potato's default scale is -3..3; a config that says otherwise (``scale: {min: 1, max: 6}``) is given
  as the ``scale`` option ("1..6"). The scale's points map one to one onto the project's Likert points, min to 1; an
  even scale without a middle (1..6) goes onto the project with one point more (7), its halves on either side of the
  unused middle point; any other scale is refused, never stretched;
- likert: ``{"scale_4": "4"}``: the Likert point 4 (the scale compares the pair, 1 = the first response preferred).
A line with several schemes uses the one the lead names (``scheme``), else one named ``overall`` or ``preference``;
without either it is refused with the names to choose from.
"""

from __future__ import annotations

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
    read_records,
    whole,
)

TOOL = "Potato"
PROMPT_KEYS = ("prompt", "question", "instruction", "text")
ITEMS_KEYS = ("responses", "text")
PREFERRED_SCHEMES = ("overall", "preference")
SELECTIONS: dict[str, int | str] = {"a": 0, "b": 1, "tie": TIE}
DEFAULT_SCALE = (-3, 3)


def _responses(record: dict[str, Any], options: Options) -> tuple[list[Any], set[str]]:
    keys = (options.items_key,) if options.items_key else ITEMS_KEYS
    for key in keys:
        value = record.get(key)
        if isinstance(value, list):
            if len(value) < 2 or not all(isinstance(v, str) for v in value):
                raise RecordInvalid(f"{TOOL} instance {key!r} must list 2 or more response texts")
            return value, {key}
    if not options.items_key and "left" in record and "right" in record:
        return [record["left"], record["right"]], {"left", "right"}
    looked = repr(options.items_key) if options.items_key else "'responses', 'text' or 'left' and 'right'"
    raise RecordInvalid(f"{TOOL} instance has no list of responses under {looked} (the scheme's items_key)")


def items(handle: IO[bytes], *, options: Options | None = None) -> Converted:
    options = options or Options()
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
            responses, used = _responses(record, options)
            prompt_key = next(
                (k for k in PROMPT_KEYS if k not in used and isinstance(record.get(k), str) and record[k].strip()),
                None,
            )
            if prompt_key is None:
                looked = ", ".join(repr(k) for k in PROMPT_KEYS if k not in used)
                raise RecordInvalid(f"{TOOL} instance has no prompt (looked for {looked})")
            row = {
                "id": str(record["id"]),
                "prompt": record[prompt_key],
                "responses": responses,
                "lead_metadata": lead_only({k: v for k, v in record.items() if k not in {"id", prompt_key, *used}}),
            }
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out


def _scheme(schemes: dict[str, Any], options: Options) -> tuple[str, Any]:
    if options.scheme:
        if options.scheme not in schemes:
            raise RecordInvalid(f"{TOOL} line has no scheme {options.scheme!r} (it has {', '.join(sorted(schemes))})")
        return options.scheme, schemes[options.scheme]
    if len(schemes) == 1:
        return next(iter(schemes.items()))
    for name in PREFERRED_SCHEMES:
        if name in schemes:
            return name, schemes[name]
    raise RecordInvalid(
        f"{TOOL} line has several schemes ({', '.join(sorted(schemes))}): choose the one to import (scheme)"
    )


def _scale_point(value: Any, likert_points: int, options: Options) -> int:
    low, high = options.scale or DEFAULT_SCALE
    point = whole(value, f"{TOOL} scale_value")
    if not low <= point <= high:
        raise RecordInvalid(f"{TOOL} scale_value {point} is outside the scheme's scale {low}..{high} (option scale)")
    points, step = high - low + 1, point - low + 1
    if points == likert_points:
        return step
    if points % 2 == 0 and points + 1 == likert_points:
        # A forced-choice scale (no middle): each half keeps its points, the project's middle point stays unused.
        return step if step <= points // 2 else step + 1
    wanted = points if points % 2 else f"{points + 1}"
    raise RecordInvalid(
        f"{TOOL} scale {low}..{high} has {points} points and this project's Likert scale {likert_points}: import it "
        f"into a {wanted}-point project (points are never stretched onto another scale)"
    )


def _judgment(name: str, value: Any, likert_points: int, options: Options, base: dict[str, Any]) -> Judgment:
    if not isinstance(value, dict) or not value:
        raise RecordInvalid(f"{TOOL} scheme {name!r} holds no answer")
    if "selection" in value:
        selection = str(value["selection"]).strip().lower()
        if selection not in SELECTIONS:
            raise RecordInvalid(f"{TOOL} pairwise selection {value['selection']!r} is not 'A', 'B' or 'tie'")
        return Judgment(choice=SELECTIONS[selection], **base)
    if "scale_value" in value:
        return Judgment(scale=_scale_point(value["scale_value"], likert_points, options), **base)
    if len(value) == 1:
        label, point = next(iter(value.items()))
        if str(label).startswith("scale_"):
            return Judgment(scale=whole(point, f"{TOOL} Likert value"), **base)
    raise RecordInvalid(f"{TOOL} scheme {name!r} is neither pairwise nor Likert: {value!r}")


def labels(handle: IO[bytes], *, mode: str, likert_points: int, options: Options | None = None) -> Converted:
    options = options or Options()
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
            scheme, value = _scheme(schemes, options)
            base = {"item": str(instance), "annotator": str(user)}
            judgment = _judgment(scheme, value, likert_points, options, base)
            row = label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL, options=options)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.rows.append((source, row))
    return out
