"""Import of items from JSON Lines, in Penumbra's native shape or TRL's preference shape: the writing side.

Every row is checked (projects.imports.rows) before anything is written; a file is imported whole or not at all
unless the caller asks to skip bad rows. Rows are written in batches, with COPY on PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from config import bulk, events
from projects import blind
from projects.imports.rows import (
    DUPLICATE_POLICIES,
    TRL_CHOSEN_AS,
    ImportRejected,
    ParsedItem,
    RowError,
    RowInvalid,
    check_import_options,
    parse_row,
    to_permille,
)
from projects.models import Item, Project, Response, Suggestion, SuggestionValue
from projects.services import blind_sample_assign_new, blind_sample_redraw

# The row checks are imported from here by the API, the commands and label import.
__all__ = [
    "BATCH",
    "DUPLICATE_POLICIES",
    "TRL_CHOSEN_AS",
    "ImportRejected",
    "ImportResult",
    "Progress",
    "RowError",
    "RowInvalid",
    "items_import",
    "to_permille",
]

MAX_ERRORS_KEPT = 1000
BATCH = 2000

Progress = Callable[[int, int | None], None]


@dataclass
class ImportResult:
    created: int = 0
    updated: int = 0
    skipped: int = 0
    invalid: int = 0
    errors: list[RowError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how another tool's file was read, where the lead chose

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "skipped": self.skipped,
            "invalid": self.invalid,
            "errors": [{"line": e.line, "message": e.message} for e in self.errors],
            **({"notes": self.notes} if self.notes else {}),
        }


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
                (pk, self.project.pk, i.external_id, i.prompt,
                 None if i.prompt_messages is None else json.dumps(i.prompt_messages),
                 json.dumps(i.metadata), json.dumps(i.lead_metadata), i.gold_position, i.blind_draw,
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
    "id", "project_id", "external_id", "prompt", "prompt_messages", "metadata", "lead_metadata", "gold_position",
    "blind_draw", "is_blind",
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
        prompt_messages=row.prompt_messages,
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
        item.lead_metadata, item.prompt_messages = row.lead_metadata, row.prompt_messages
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
        list(items.values()),
        ["prompt", "prompt_messages", "metadata", "lead_metadata", "gold_position", "updated_at"],
        batch_size=BATCH,
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
