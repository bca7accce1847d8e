"""Import of items from JSON Lines, in Penumbra's native shape or TRL's preference shape.

Native: {"id", "prompt", "responses": [text | {"text", "model"}], "suggestion": {"preferred", "rationale", "model",
"ifs"}, "gold", "metadata"}. TRL: {"prompt", "chosen", "rejected"} (an "id" is optional; without one the id is a
hash of the content, so re-importing the same file finds the same items).

Every row is checked before anything is written; a file is imported whole or not at all unless the caller asks to
skip bad rows. Preferred and gold responses are given by index into "responses" (0-based) or "tie".
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from config import bulk, events
from config.input_limits import DEPTH_MESSAGE, json_value_problem
from projects import blind
from projects.models import PERMILLE, TIE, Item, Project, Response, Suggestion, SuggestionValue
from projects.services import blind_sample_assign_new, blind_sample_redraw

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
MAX_ERRORS_KEPT = 1000
BATCH = 2000

Progress = Callable[[int, int | None], None]


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
class ImportResult:
    created: int = 0
    updated: int = 0
    skipped: int = 0
    invalid: int = 0
    errors: list[RowError] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "skipped": self.skipped,
            "invalid": self.invalid,
            "errors": [{"line": e.line, "message": e.message} for e in self.errors],
        }


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


def parse_row(*, line: int, text: str, project: Project, trl_chosen_as: str) -> ParsedItem:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowInvalid(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise RowInvalid(DEPTH_MESSAGE) from None
    if (problem := json_value_problem(row)) is not None:
        raise RowInvalid(problem)
    if not isinstance(row, dict):
        raise RowInvalid("expected a JSON object")
    if "chosen" in row or "rejected" in row:
        return _parse_trl(line=line, row=row, project=project, trl_chosen_as=trl_chosen_as)
    unknown = set(row) - NATIVE_FIELDS
    if unknown:
        raise RowInvalid(f"unknown field(s): {', '.join(sorted(unknown))}")
    if "prompt" not in row:
        raise RowInvalid("prompt is missing")
    prompt = _text(row["prompt"], "prompt")
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
    return ParsedItem(line, external_id, prompt, responses, gold, metadata, suggestion, lead_metadata)


def _parse_trl(*, line: int, row: dict[str, Any], project: Project, trl_chosen_as: str) -> ParsedItem:
    unknown = set(row) - TRL_FIELDS
    if unknown:
        raise RowInvalid(f"unknown field(s) for the TRL shape: {', '.join(sorted(unknown))}")
    for key in ("prompt", "chosen", "rejected"):
        if key not in row:
            raise RowInvalid(f"{key} is missing (TRL rows need prompt, chosen and rejected)")
    prompt = _text(row["prompt"], "prompt")
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
    return ParsedItem(line, external_id, prompt, responses, gold, metadata, suggestion, lead_metadata)


def check_import_options(*, on_duplicate: str, trl_chosen_as: str) -> None:
    if on_duplicate not in DUPLICATE_POLICIES:
        raise ValidationError({"on_duplicate": f"Expected one of {', '.join(DUPLICATE_POLICIES)}."})
    if trl_chosen_as not in TRL_CHOSEN_AS:
        raise ValidationError({"trl_chosen_as": f"Expected one of {', '.join(TRL_CHOSEN_AS)}."})


class _Importer:
    """One import run: parses line by line and writes in batches, so memory follows the batch, not the file.

    Writes happen inside the caller's transaction. Once a bad row is seen (and skipping is not allowed) nothing
    more is written, the rest is only checked so that every bad line is reported, and raising at the end rolls
    back what was written before.
    """

    def __init__(self, *, project: Project, on_duplicate: str, skip_invalid: bool, trl_chosen_as: str) -> None:
        self.project = project
        self.on_duplicate = on_duplicate
        self.skip_invalid = skip_invalid
        self.trl_chosen_as = trl_chosen_as
        self.result = ImportResult()
        self.error_count = 0
        self.seen: dict[str, int] = {}
        self.now = timezone.now()

    @property
    def writing(self) -> bool:
        return self.skip_invalid or self.error_count == 0

    def error(self, line: int, message: str) -> None:
        self.error_count += 1
        if len(self.result.errors) < MAX_ERRORS_KEPT:
            self.result.errors.append(RowError(line, message))

    def parse(self, line: int, text: str) -> ParsedItem | None:
        try:
            row = parse_row(line=line, text=text, project=self.project, trl_chosen_as=self.trl_chosen_as)
        except RowInvalid as exc:
            self.error(line, str(exc))
            return None
        if row.external_id in self.seen:
            self.error(line, f"id {row.external_id!r} already appears on line {self.seen[row.external_id]}")
            return None
        self.seen[row.external_id] = line
        return row

    def flush(self, rows: list[ParsedItem]) -> None:
        if not rows:
            return
        existing = dict(
            Item.objects.filter(project=self.project, external_id__in=[r.external_id for r in rows]).values_list(
                "external_id", "id"
            )
        )
        fresh = [r for r in rows if r.external_id not in existing]
        again = [r for r in rows if r.external_id in existing]
        if self.on_duplicate == "reject":
            for row in again:
                self.error(
                    row.line,
                    f"id {row.external_id!r} already exists in this project "
                    "(re-import with on_duplicate=update or skip)",
                )
            again = []
        elif self.on_duplicate == "skip":
            self.result.skipped += len(again)
            again = []
        else:
            again = self._updatable(again, existing)
        if not self.writing:
            return
        self._create(fresh)
        self.result.created += len(fresh)
        _update_batch(rows=again, existing=existing)
        self.result.updated += len(again)

    def _updatable(self, rows: list[ParsedItem], existing: dict[str, int]) -> list[ParsedItem]:
        annotated = set(
            Item.objects.filter(pk__in=[existing[r.external_id] for r in rows], annotation_count__gt=0).values_list(
                "external_id", flat=True
            )
        )
        if not annotated:
            return rows
        current = _current_responses([existing[e] for e in annotated])
        keep = []
        for row in rows:
            if row.external_id in annotated and current[existing[row.external_id]] != [r[0] for r in row.responses]:
                self.error(row.line, f"item {row.external_id!r} has labels: its responses cannot change")
            else:
                keep.append(row)
        return keep

    def _create(self, rows: list[ParsedItem]) -> None:
        if not rows:
            return
        items = [_new_item(self.project, row) for row in rows]
        blind_sample_assign_new(project=self.project, items=items)
        if bulk.is_postgresql():
            self._copy(items, rows)
            return
        Item.objects.bulk_create(items, batch_size=BATCH)
        responses = [
            Response(item=item, position=position, text=text, model_name=model)
            for item, row in zip(items, rows, strict=True)
            for position, (text, model) in enumerate(row.responses)
        ]
        Response.objects.bulk_create(responses, batch_size=BATCH)
        _create_suggestions(items=items, rows=rows, responses=responses)

    def _copy(self, items: list[Item], rows: list[ParsedItem]) -> None:
        item_ids = bulk.reserve_ids(Item, len(items))
        bulk.insert_rows(
            Item,
            ITEM_COLUMNS,
            (
                (pk, self.project.pk, i.external_id, i.prompt, json.dumps(i.metadata), json.dumps(i.lead_metadata),
                 i.gold_position, i.blind_draw,
                 i.is_blind, i.blind_inclusion_probability, i.queue_key, 0, self.now, self.now)
                for pk, i in zip(item_ids, items, strict=True)
            ),
        )  # fmt: skip
        response_ids = iter(bulk.reserve_ids(Response, sum(len(row.responses) for row in rows)))
        response_id = {
            (pk, position): next(response_ids) for pk, row in zip(item_ids, rows, strict=True)
            for position in range(len(row.responses))
        }  # fmt: skip
        bulk.insert_rows(
            Response,
            ("id", "item_id", "position", "text", "model_name"),
            (
                (response_id[(pk, position)], pk, position, text, model)
                for pk, row in zip(item_ids, rows, strict=True)
                for position, (text, model) in enumerate(row.responses)
            ),
        )
        with_suggestion = [(pk, row) for pk, row in zip(item_ids, rows, strict=True) if row.suggestion is not None]
        with_values = [(pk, row) for pk, row in with_suggestion if row.suggestion and row.suggestion["values"]]
        suggestion_ids = bulk.reserve_ids(Suggestion, len(with_suggestion))
        bulk.insert_rows(
            Suggestion,
            SUGGESTION_COLUMNS,
            (
                (sid, pk, Suggestion.Status.OK, row.suggestion["preferred"], row.suggestion["rationale"],  # type: ignore[index]
                 row.suggestion["model"], Suggestion.Source.IMPORTED, "", 1, self.now, self.now)  # type: ignore[index]
                for sid, (pk, row) in zip(suggestion_ids, with_suggestion, strict=True)
            ),
        )  # fmt: skip
        suggestion_of = dict(zip([pk for pk, _ in with_suggestion], suggestion_ids, strict=True))
        bulk.insert_rows(
            SuggestionValue,
            ("suggestion_id", "response_id", "mu", "nu"),
            (
                (suggestion_of[pk], response_id[(pk, position)], mu, nu)
                for pk, row in with_values
                for position, (mu, nu) in enumerate(row.suggestion["values"])  # type: ignore[index]
            ),
        )


ITEM_COLUMNS = (
    "id", "project_id", "external_id", "prompt", "metadata", "lead_metadata", "gold_position", "blind_draw", "is_blind",
    "blind_inclusion_probability", "queue_key", "annotation_count", "created_at", "updated_at",
)  # fmt: skip
SUGGESTION_COLUMNS = (
    "id", "item_id", "status", "preferred_position", "rationale", "model_name", "source", "failure_reason",
    "attempts", "created_at", "updated_at",
)  # fmt: skip


@transaction.atomic
def items_import(
    *,
    project: Project,
    lines: Iterable[str],
    on_duplicate: str = "reject",
    skip_invalid: bool = False,
    trl_chosen_as: str = "gold",
    progress: Progress | None = None,
    total_lines: int | None = None,
) -> ImportResult:
    """Import items; raises ImportRejected (nothing written) on bad rows unless ``skip_invalid``."""
    check_import_options(on_duplicate=on_duplicate, trl_chosen_as=trl_chosen_as)
    project = Project.objects.select_for_update().get(pk=project.pk)
    run = _Importer(project=project, on_duplicate=on_duplicate, skip_invalid=skip_invalid, trl_chosen_as=trl_chosen_as)
    batch: list[ParsedItem] = []
    line_number = 0
    for line_number, text in enumerate(lines, start=1):
        if text.strip() and (row := run.parse(line_number, text)) is not None:
            batch.append(row)
        if len(batch) >= BATCH:
            run.flush(batch)
            batch = []
            if progress is not None:
                progress(line_number, total_lines)
    run.flush(batch)
    if progress is not None:
        progress(line_number, total_lines)
    run.result.errors.sort(key=lambda e: e.line)
    run.result.invalid = run.error_count
    if run.error_count and not skip_invalid:
        raise ImportRejected(run.result.errors, run.error_count)
    if project.labelling_started_at is None and run.result.created:
        blind_sample_redraw(project=project)
    if run.result.created or run.result.updated:
        # Progress and suggestion counts are project figures: refresh them after commit.
        events.items_imported(project_id=project.pk)
    return run.result


def _current_responses(item_ids: list[int]) -> dict[int, list[str]]:
    current: dict[int, list[str]] = {item_id: [] for item_id in item_ids}
    for item_id, text in (
        Response.objects.filter(item_id__in=item_ids).order_by("item_id", "position").values_list("item_id", "text")
    ):
        current[item_id].append(text)
    return current


def _new_item(project: Project, row: ParsedItem) -> Item:
    return Item(
        project=project,
        external_id=row.external_id,
        prompt=row.prompt,
        metadata=row.metadata,
        lead_metadata=row.lead_metadata,
        gold_position=row.gold,
        blind_draw=blind.uniform_draw(seed=project.seed, external_id=row.external_id),
        queue_key=blind.queue_key(seed=project.seed, external_id=row.external_id),
    )


def _create_suggestions(*, items: list[Item], rows: list[ParsedItem], responses: list[Response]) -> None:
    by_item: dict[int, list[Response]] = {}
    for response in responses:
        by_item.setdefault(response.item_id, []).append(response)
    suggestions = [
        Suggestion(
            item=item,
            preferred_position=row.suggestion["preferred"],
            rationale=row.suggestion["rationale"],
            model_name=row.suggestion["model"],
            source=Suggestion.Source.IMPORTED,
        )
        for item, row in zip(items, rows, strict=True)
        if row.suggestion is not None
    ]
    Suggestion.objects.bulk_create(suggestions, batch_size=BATCH)
    row_by_item = {item.pk: row for item, row in zip(items, rows, strict=True)}
    values = [
        SuggestionValue(suggestion=suggestion, response=response, mu=mu, nu=nu)
        for suggestion in suggestions
        if (pairs := row_by_item[suggestion.item_id].suggestion["values"]) is not None  # type: ignore[index]
        for response, (mu, nu) in zip(by_item[suggestion.item_id], pairs, strict=True)
    ]
    SuggestionValue.objects.bulk_create(values, batch_size=BATCH)


def _update_batch(*, rows: list[ParsedItem], existing: dict[str, int]) -> None:
    """Re-imported items, a batch at a time: a handful of queries per batch, none per row."""
    if not rows:
        return
    items = Item.objects.in_bulk([existing[row.external_id] for row in rows])
    current: dict[int, list[Response]] = {pk: [] for pk in items}
    for response in Response.objects.filter(item_id__in=list(items)).order_by("item_id", "position"):
        current[response.item_id].append(response)
    now = timezone.now()
    replaced: list[int] = []
    renamed: list[Response] = []
    for row in rows:
        item = items[existing[row.external_id]]
        item.prompt, item.metadata, item.gold_position, item.updated_at = row.prompt, row.metadata, row.gold, now
        item.lead_metadata = row.lead_metadata
        if [r.text for r in current[item.pk]] != [text for text, _ in row.responses]:
            # Only reachable for items without labels (checked before), so replacing responses loses nothing.
            replaced.append(item.pk)
            current[item.pk] = [
                Response(item=item, position=position, text=text, model_name=model)
                for position, (text, model) in enumerate(row.responses)
            ]
            continue
        for response, (_, model) in zip(current[item.pk], row.responses, strict=True):
            if response.model_name != model:
                response.model_name = model
                renamed.append(response)
    Item.objects.bulk_update(
        list(items.values()), ["prompt", "metadata", "lead_metadata", "gold_position", "updated_at"], batch_size=BATCH
    )
    Response.objects.filter(item_id__in=replaced).delete()
    Response.objects.bulk_create([r for pk in replaced for r in current[pk]], batch_size=BATCH)
    Response.objects.bulk_update(renamed, ["model_name"], batch_size=BATCH)
    suggested = [row for row in rows if row.suggestion is not None]
    suggested_items = [items[existing[row.external_id]] for row in suggested]
    Suggestion.objects.filter(item__in=suggested_items).delete()
    _create_suggestions(
        items=suggested_items,
        rows=suggested,
        responses=[response for item in suggested_items for response in current[item.pk]],
    )
