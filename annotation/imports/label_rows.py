"""One row of a label import file: its shape and values checked (parse_label), then against its item.

Every problem raises ValueError with the reason the import reports for the row's line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from projects.imports.items import RowInvalid, to_permille
from projects.imports.rows import json_object
from projects.models import PERMILLE, TIE, Project


@dataclass
class ParsedLabel:
    line: int
    item_external_id: str
    annotator: str
    mode: str
    choice: int | None = None
    likert: int | None = None
    # (position, criterion name) → (μ, ν) per-mille
    values: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)
    time_spent_ms: int = 0
    timestamp: datetime | None = None
    response_order: list[int] | None = None
    suggestion_shown: bool = False
    # The file's positions with the text and model of each (an export's "responses"): resolved against the item's
    # stored responses by relocate_label, so a file from another project never flips a label.
    responses: list[tuple[int, str, str | None]] | None = None


def _permille(raw: Any, what: str) -> int:
    try:
        return to_permille(raw, what)
    except RowInvalid as exc:
        raise ValueError(str(exc)) from None


#: The largest value an integer column holds (time per label in ms: 24 days).
INT_MAX = 2**31 - 1


def _whole(raw: Any, name: str, minimum: int, maximum: int = INT_MAX) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not minimum <= raw <= maximum:
        raise ValueError(f"{name} must be a whole number from {minimum} to {maximum}")
    return raw


def parse_label(line_number: int, text: str, project: Project, criterion_names: list[str]) -> ParsedLabel:  # noqa: C901
    """A label with its shape checked; raises ValueError with the reason. Item-dependent checks come later."""
    try:
        row = json_object(text, invalid_json=lambda exc: f"not valid JSON ({exc.msg})")
    except RowInvalid as exc:
        raise ValueError(str(exc)) from None
    item = row.get("item")
    if not isinstance(item, str | int) or isinstance(item, bool) or not str(item).strip():
        raise ValueError('"item" (the item\'s external id) is missing')
    annotator = row.get("annotator")
    if not isinstance(annotator, str) or not annotator.strip():
        raise ValueError('"annotator" (a name) is missing')
    if len(annotator.strip()) > 150:
        raise ValueError('"annotator" is longer than 150 characters')
    if project.mode == Project.Mode.CROSSOVER:
        raise ValueError("a crossover method study takes no imported labels: every label follows its plan")
    mode = row.get("mode")
    if mode != project.mode:
        raise ValueError(f'"mode" must be "{project.mode}", the project\'s mode (got {json.dumps(mode)})')
    label = ParsedLabel(line=line_number, item_external_id=str(item).strip(), annotator=annotator.strip(), mode=mode)

    if mode == Project.Mode.BINARY:
        choice = row.get("choice")
        if choice == "tie":
            label.choice = TIE
        else:
            label.choice = _whole(choice, '"choice" (a response position or "tie")', TIE)
    elif mode == Project.Mode.LIKERT:
        likert = _whole(row.get("likert"), '"likert"', 1)
        if likert > project.likert_points:
            raise ValueError(f'"likert" must be from 1 to {project.likert_points}')
        label.likert = likert
    else:
        values = row.get("values")
        if not isinstance(values, list) or not values:
            raise ValueError('"values" must be a list of {"position", "criterion", "mu", "nu"}')
        for entry in values:
            if not isinstance(entry, dict):
                raise ValueError('each of "values" must be an object {"position", "criterion", "mu", "nu"}')
            position = _whole(entry.get("position"), '"position"', 0)
            criterion = entry.get("criterion")
            if criterion is None and len(criterion_names) == 1:
                criterion = criterion_names[0]
            if criterion not in criterion_names:
                raise ValueError(f"unknown criterion {json.dumps(criterion)} (expected {', '.join(criterion_names)})")
            mu = _permille(entry.get("mu"), f"mu of position {position}, {criterion}")
            nu = _permille(entry.get("nu"), f"nu of position {position}, {criterion}")
            if mu + nu > PERMILLE:
                raise ValueError(f"mu + nu of position {position}, {criterion} is above 1")
            if (position, criterion) in label.values:
                raise ValueError(f"position {position}, {criterion} is given twice")
            label.values[(position, criterion)] = (mu, nu)

    if "time_spent_ms" in row and row["time_spent_ms"] is not None:
        label.time_spent_ms = _whole(row["time_spent_ms"], '"time_spent_ms"', 0)
    if row.get("timestamp") is not None:
        stamp = parse_datetime(str(row["timestamp"]))
        if stamp is None:
            raise ValueError('"timestamp" must be an ISO 8601 date and time')
        label.timestamp = stamp if timezone.is_aware(stamp) else timezone.make_aware(stamp, UTC)
    if row.get("response_order") is not None:
        order = row["response_order"]
        if not isinstance(order, list) or any(isinstance(p, bool) or not isinstance(p, int) for p in order):
            raise ValueError('"response_order" must be a list of response positions')
        label.response_order = order
    shown = row.get("suggestion_shown", False)
    if not isinstance(shown, bool):
        raise ValueError('"suggestion_shown" must be true or false')
    label.suggestion_shown = shown
    if row.get("responses") is not None:
        label.responses = _responses(row["responses"])
    return label


def _responses(raw: Any) -> list[tuple[int, str, str | None]]:
    shape = '"responses" must be a list of {"position", "text", "model"}'
    if not isinstance(raw, list) or not raw:
        raise ValueError(shape)
    found: list[tuple[int, str, str | None]] = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise ValueError(shape)
        model = entry.get("model")
        if model is not None and not isinstance(model, str):
            raise ValueError(f"{shape}: a model is a name")
        found.append((_whole(entry.get("position"), '"position" of "responses"', 0), entry["text"], model or None))
    if len({position for position, _, _ in found}) != len(found):
        raise ValueError('"responses" names a position twice')
    return found


def _stored_position(text: str, model: str | None, stored: dict[int, tuple[str, str]], taken: set[int]) -> int | None:
    """The item's position whose response has this text (and this model, when both name one), not yet taken."""
    for position, (stored_text, stored_model) in sorted(stored.items()):
        if position in taken or stored_text != text:
            continue
        if model and stored_model and model != stored_model:
            continue
        return position
    return None


def relocate_label(label: ParsedLabel, stored: dict[int, tuple[str, str]], likert_points: int) -> None:
    """Rewrite the label's positions into the item's stored positions by response text and model.

    A file position whose response is not among the item's responses raises ValueError: labelling the response
    that happens to sit at that position here would be a silent flip. A Likert point is mirrored when the two
    responses sit the other way round (the scale reads position 0 against position 1)."""
    if label.responses is None:
        return
    mapping: dict[int, int] = {}
    for position, text, model in label.responses:
        found = _stored_position(text, model, stored, set(mapping.values()))
        if found is None:
            preview = json.dumps(text[:60], ensure_ascii=False)
            raise ValueError(f"the response at position {position} ({preview}) is not a response of this item")
        mapping[position] = found
    if len(mapping) != len(stored):
        raise ValueError(f'"responses" names {len(mapping)} responses; this item has {len(stored)}')
    if label.choice is not None and label.choice != TIE:
        if label.choice not in mapping:
            raise ValueError(f'"choice" {label.choice} is not a position of "responses"')
        label.choice = mapping[label.choice]
    if label.likert is not None and mapping.get(0) == 1:
        label.likert = likert_points + 1 - label.likert
    if label.values:
        unknown = sorted({p for p, _ in label.values} - set(mapping))
        if unknown:
            raise ValueError(f'position(s) {unknown} of "values" are not positions of "responses"')
        label.values = {(mapping[p], c): v for (p, c), v in label.values.items()}
    if label.response_order is not None:
        if any(p not in mapping for p in label.response_order):
            raise ValueError('"response_order" names a position that "responses" does not')
        label.response_order = [mapping[p] for p in label.response_order]


def check_against_item(label: ParsedLabel, positions: list[int], criterion_names: list[str]) -> None:
    if label.choice is not None and label.choice != TIE and label.choice not in positions:
        raise ValueError(f'"choice" {label.choice} is not a response position of this item ({positions})')
    if label.likert is not None and len(positions) != 2:
        raise ValueError("a side-by-side scale needs an item with exactly two responses")
    if label.values:
        wanted = {(p, c) for p in positions for c in criterion_names}
        given = set(label.values)
        if given - wanted:
            extra = sorted(p for p, _ in given - wanted)
            raise ValueError(f"position(s) {extra} are not responses of this item ({positions})")
        if wanted - given:
            missing = ", ".join(f"position {p} {c}" for p, c in sorted(wanted - given))
            raise ValueError(f"values missing for {missing}")
    if label.response_order is not None and sorted(label.response_order) != positions:
        raise ValueError(f'"response_order" must list each response position once ({positions})')
