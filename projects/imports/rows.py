"""Checking the rows of an item import, one at a time, before anything is written (projects.imports.items writes them).

Native: {"id", "prompt", "responses": [text | {"text", "model"}], "suggestion": {"preferred", "rationale", "model",
"ifs"}, "gold", "metadata"}. TRL: {"prompt", "chosen", "rejected"} (an "id" is optional; without one the id is a
hash of the content, so re-importing the same file finds the same items). Preferred and gold responses are given
by index into "responses" (0-based) or "tie". A bad row raises RowInvalid naming the field; the import collects
them as RowError and, unless told to skip bad rows, refuses the file with ImportRejected.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from config.input_limits import DEPTH_MESSAGE, json_value_problem
from projects import blind, conversation
from projects.models import PERMILLE, TIE, Project

NATIVE_FIELDS = {"id", "prompt", "responses", "suggestion", "gold", "metadata", "lead_metadata"}
TRL_FIELDS = {"id", "prompt", "chosen", "rejected", "metadata", "lead_metadata"}
# A metadata key whose name contains one of these says something about the gold answer (the expert's
# justification, an explanation of the preferred response, …): it goes to the lead-only part, because gold must
# never reach the annotators it measures. Erring towards hiding costs a lead one click; a leak costs the figures.
LEAD_ONLY_KEY_PARTS = (
    "gold",
    "justification",
    "explanation",
    "rationale",
    "expert",
    "correct",
    "preferred",
    "chosen",
    "rejected",
)
SUGGESTION_FIELDS = {"preferred", "rationale", "model", "ifs"}
DUPLICATE_POLICIES = ("reject", "update", "skip")
TRL_CHOSEN_AS = ("gold", "suggestion", "none")


@dataclass(frozen=True)
class RowError:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class ImportRejected(ValidationError):
    """Bad rows and no permission to skip them: nothing was written."""

    def __init__(self, errors: list[RowError], total_errors: int | None = None) -> None:
        self.errors = errors
        self.total_errors = total_errors if total_errors is not None else len(errors)
        shown = "; ".join(str(e) for e in errors[:20])
        more = f" (and {self.total_errors - 20} more)" if self.total_errors > 20 else ""
        super().__init__(f"{self.total_errors} bad row(s), nothing imported: {shown}{more}")


@dataclass
class ParsedItem:
    line: int
    external_id: str
    prompt: str
    responses: list[tuple[str, str]]  # (text, model) in stored order
    gold: int | None
    metadata: dict[str, Any]
    suggestion: dict[str, Any] | None  # preferred, rationale, model, values (per-mille pairs) or None
    lead_metadata: dict[str, Any] = field(default_factory=dict)
    prompt_messages: list[dict[str, str]] | None = None  # the prompt as chat messages, when it came as a conversation


class RowInvalid(Exception):
    pass


def to_permille(value: Any, what: str) -> int:
    """The one per-mille rule: a number in [0, 1] that is k/1000 for a whole k."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RowInvalid(f"{what} must be a number from 0 to 1")
    if not 0 <= value <= 1:
        # Checked before scaling: 1e308 * 1000 is infinite and cannot be rounded.
        raise RowInvalid(f"{what}={value!r} is outside 0..1")
    scaled = value * PERMILLE
    whole = round(scaled)
    if abs(scaled - whole) > 1e-6:
        raise RowInvalid(f"{what}={value!r} has more than 3 decimals (values are stored in thousandths)")
    if not 0 <= whole <= PERMILLE:
        raise RowInvalid(f"{what}={value!r} is outside 0..1")
    return whole


def _text(value: Any, what: str, *, may_be_empty: bool = False) -> str:
    """A text, or a chat transcript [{"role", "content"}] flattened to text.

    Responses may be empty (``may_be_empty``): real preference data has models that answered nothing, and an empty
    answer is a legitimate thing to judge. A prompt may not.
    """
    if isinstance(value, str):
        if not value.strip() and not may_be_empty:
            raise RowInvalid(f"{what} is empty")
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) and "content" in m for m in value):
        parts = [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in value]
        if len(value) == 1:
            return _text(parts[0], what, may_be_empty=may_be_empty)
        return "\n\n".join(f"**{m.get('role', 'message')}:** {part}" for m, part in zip(value, parts, strict=True))
    raise RowInvalid(f"{what} must be a text" if may_be_empty else f"{what} must be a non-empty text")


def _prompt(value: Any) -> tuple[str, list[dict[str, str]] | None]:
    """The prompt's text and, when it came as chat messages, the messages themselves (projects.conversation)."""
    if not conversation.is_messages(value):
        return _text(value, "prompt"), None
    try:
        messages = conversation.messages_check(value)
    except conversation.MessagesInvalid as exc:
        raise RowInvalid(str(exc)) from exc
    return conversation.messages_flatten(messages), messages


def _position(value: Any, n: int, what: str) -> int:
    if isinstance(value, str) and value.strip().lower() == "tie":
        return TIE
    if isinstance(value, bool) or not isinstance(value, int):
        raise RowInvalid(f'{what} must be a response index (0..{n - 1}) or "tie"')
    if value == TIE:
        return TIE
    if not 0 <= value < n:
        raise RowInvalid(f"{what}={value} is not a response index (0..{n - 1})")
    return value


def _external_id(row: dict[str, Any], fallback_content: str) -> str:
    raw = row.get("id")
    if raw is None:
        return "sha1-" + hashlib.sha1(fallback_content.encode()).hexdigest()[:16]
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        raise RowInvalid("id must be a text or a whole number")
    text = str(raw).strip()
    if not text:
        raise RowInvalid("id is empty")
    if len(text) > 200:
        raise RowInvalid("id is longer than 200 characters")
    return text


def _suggestion(raw: Any, n: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise RowInvalid("suggestion must be an object")
    unknown = set(raw) - SUGGESTION_FIELDS
    if unknown:
        raise RowInvalid(f"unknown suggestion field(s): {', '.join(sorted(unknown))}")
    if "preferred" not in raw:
        raise RowInvalid("suggestion.preferred is missing")
    preferred = _position(raw["preferred"], n, "suggestion.preferred")
    rationale = raw.get("rationale") or ""
    model = raw.get("model") or ""
    if not isinstance(rationale, str) or not isinstance(model, str):
        raise RowInvalid("suggestion.rationale and suggestion.model must be texts")
    values: list[tuple[int, int]] | None = None
    if raw.get("ifs") is not None:
        ifs = raw["ifs"]
        if not isinstance(ifs, list) or len(ifs) != n:
            raise RowInvalid(f"suggestion.ifs must list one (mu, nu) per response ({n})")
        values = []
        for index, pair in enumerate(ifs):
            if isinstance(pair, dict) and set(pair) == {"mu", "nu"}:
                mu_raw, nu_raw = pair["mu"], pair["nu"]
            elif isinstance(pair, list | tuple) and len(pair) == 2:
                mu_raw, nu_raw = pair
            else:
                raise RowInvalid(f'suggestion.ifs[{index}] must be {{"mu", "nu"}} or [mu, nu]')
            mu = to_permille(mu_raw, f"suggestion.ifs[{index}].mu")
            nu = to_permille(nu_raw, f"suggestion.ifs[{index}].nu")
            if mu + nu > PERMILLE:
                raise RowInvalid(f"suggestion.ifs[{index}]: mu + nu = {(mu + nu) / PERMILLE:g} exceeds 1")
            values.append((mu, nu))
    return {"preferred": preferred, "rationale": rationale, "model": model[:200], "values": values}


def _object(row: dict[str, Any], key: str) -> dict[str, Any]:
    value = row.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RowInvalid(f"{key} must be an object")
    return value


def split_metadata(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metadata every member may read, lead-only metadata): gold-related keys move to the lead-only part."""
    visible: dict[str, Any] = {}
    lead_only = dict(_object(row, "lead_metadata"))
    for key, value in _object(row, "metadata").items():
        if any(part in key.lower() for part in LEAD_ONLY_KEY_PARTS):
            if key in lead_only and lead_only[key] != value:
                raise RowInvalid(f"metadata.{key} is lead-only and differs from lead_metadata.{key}")
            lead_only[key] = value
        else:
            visible[key] = value
    return visible, lead_only


def json_object(text: str, *, invalid_json: Callable[[json.JSONDecodeError], str]) -> dict[str, Any]:
    """One line of a JSON Lines import as an object; RowInvalid with the reason (``invalid_json`` words a line that
    is not JSON) for a line too deep, holding a value no column takes, or not an object."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowInvalid(invalid_json(exc)) from None
    except RecursionError:
        raise RowInvalid(DEPTH_MESSAGE) from None
    if (problem := json_value_problem(row)) is not None:
        raise RowInvalid(problem)
    if not isinstance(row, dict):
        raise RowInvalid("expected a JSON object")
    return row


def parse_row(*, line: int, text: str, project: Project, trl_chosen_as: str) -> ParsedItem:
    row = json_object(text, invalid_json=lambda exc: f"not valid JSON: {exc.msg} (column {exc.colno})")
    if "chosen" in row or "rejected" in row:
        return _parse_trl(line=line, row=row, project=project, trl_chosen_as=trl_chosen_as)
    unknown = set(row) - NATIVE_FIELDS
    if unknown:
        raise RowInvalid(f"unknown field(s): {', '.join(sorted(unknown))}")
    if "prompt" not in row:
        raise RowInvalid("prompt is missing")
    prompt, messages = _prompt(row["prompt"])
    responses_raw = row.get("responses")
    if not isinstance(responses_raw, list) or len(responses_raw) < 2:
        raise RowInvalid("responses must be a list of at least 2 responses")
    responses: list[tuple[str, str]] = []
    for index, response in enumerate(responses_raw):
        if isinstance(response, dict):
            extra = set(response) - {"text", "model"}
            if extra:
                raise RowInvalid(f"responses[{index}] has unknown field(s): {', '.join(sorted(extra))}")
            model = response.get("model") or ""
            if not isinstance(model, str):
                raise RowInvalid(f"responses[{index}].model must be a text")
            text = _text(response.get("text"), f"responses[{index}].text", may_be_empty=True)
            responses.append((text, model[:200]))
        else:
            responses.append((_text(response, f"responses[{index}]", may_be_empty=True), ""))
    n = len(responses)
    if project.mode == Project.Mode.LIKERT and n != 2:
        raise RowInvalid("a Likert project compares exactly 2 responses")
    gold = None if row.get("gold") is None else _position(row["gold"], n, "gold")
    suggestion = None if row.get("suggestion") is None else _suggestion(row["suggestion"], n)
    external_id = _external_id(row, json.dumps([prompt, [r[0] for r in responses]]))
    metadata, lead_metadata = split_metadata(row)
    return ParsedItem(line, external_id, prompt, responses, gold, metadata, suggestion, lead_metadata, messages)


def _parse_trl(*, line: int, row: dict[str, Any], project: Project, trl_chosen_as: str) -> ParsedItem:
    unknown = set(row) - TRL_FIELDS
    if unknown:
        raise RowInvalid(f"unknown field(s) for the TRL shape: {', '.join(sorted(unknown))}")
    for key in ("prompt", "chosen", "rejected"):
        if key not in row:
            raise RowInvalid(f"{key} is missing (TRL rows need prompt, chosen and rejected)")
    prompt, messages = _prompt(row["prompt"])
    chosen = _text(row["chosen"], "chosen", may_be_empty=True)
    rejected = _text(row["rejected"], "rejected", may_be_empty=True)
    external_id = _external_id(row, json.dumps([prompt, chosen, rejected]))
    # Where the chosen answer sits is drawn from the project seed, so position says nothing about preference.
    chosen_first = blind.trl_chosen_first(seed=project.seed, external_id=external_id)
    responses = [(chosen, ""), (rejected, "")] if chosen_first else [(rejected, ""), (chosen, "")]
    chosen_position = 0 if chosen_first else 1
    gold = chosen_position if trl_chosen_as == "gold" else None
    suggestion = None
    if trl_chosen_as == "suggestion":
        suggestion = {"preferred": chosen_position, "rationale": "", "model": "dataset-chosen", "values": None}
    metadata, lead_metadata = split_metadata(row)
    return ParsedItem(line, external_id, prompt, responses, gold, metadata, suggestion, lead_metadata, messages)


def check_import_options(*, on_duplicate: str, trl_chosen_as: str) -> None:
    if on_duplicate not in DUPLICATE_POLICIES:
        raise ValidationError({"on_duplicate": f"Expected one of {', '.join(DUPLICATE_POLICIES)}."})
    if trl_chosen_as not in TRL_CHOSEN_AS:
        raise ValidationError({"trl_chosen_as": f"Expected one of {', '.join(TRL_CHOSEN_AS)}."})
