"""Import of existing human labels from JSON Lines, so a lab can bring its old data and measure it.

One row a line, naming the item by its external id and the annotator by name::

    {"item": "post-17", "annotator": "alice", "mode": "binary", "choice": 1}
    {"item": "post-17", "annotator": "bob", "mode": "binary", "choice": "tie"}
    {"item": "post-18", "annotator": "alice", "mode": "likert", "likert": 2}
    {"item": "post-19", "annotator": "carol", "mode": "ifs",
     "values": [{"position": 0, "criterion": "overall", "mu": 0.7, "nu": 0.1},
                {"position": 1, "criterion": "overall", "mu": 0.2, "nu": 0.6}]}

- ``mode`` must be the project's mode (a project compares methods across projects, not inside one).
- ``choice`` (binary): a stored response position, or ``"tie"`` / -1. ``likert``: 1..k, 1 = position 0 strongly
  preferred. ``values`` (IFS): every response position × criterion once; ``criterion`` may be left out when the
  project has one criterion. μ and ν are numbers in [0, 1] that are k/1000 for a whole k (the per-mille rule of the
  page, the API and the database), with μ + ν ≤ 1.
- ``responses`` (optional; every ``annotations`` export writes it): the positions of the file with each response's
  ``text`` and ``model``. The positions of ``choice``, ``likert``, ``values`` and ``response_order`` are then read
  as those responses and moved to where the same text (and model) is stored in this project, whose positions may
  have been drawn from another seed: a label never lands on the other response. A response that the item does
  not have is an error of the row.
- Optional: ``time_spent_ms`` (whole number ≥ 0), ``timestamp`` (ISO 8601, kept as the label's creation time),
  ``response_order`` (the positions in the order the annotator saw them; default stored order) and
  ``suggestion_shown`` (default false). Old data rarely records whether an LLM suggestion was on screen, so an
  imported label counts as *blind* unless its row says ``"suggestion_shown": true``: import such data into a project
  without suggestions, or mark the rows, before reading blind figures.
- Annotator names are this project's imported identities (projects.imports.annotators): never accounts, so the
  same names in two projects, or a name that is someone's account, never collide. Only ``allow_members`` /
  ``allow_leads`` file rows under the project's own members by username. Several rows for one annotator × item in
  the file are revisions, in file order: the last one stands as the annotation and every one is kept as an
  AnnotationRevision (public preference data has such repeats; people revise).
- Importing again is safe: a label that an earlier import wrote and this file gives again unchanged is a no-op
  (``unchanged``); a changed one becomes a revision of it (``revised``). A label made in Penumbra (on the page or
  through the API) is never overwritten by an import: such a row is an error. The comparison is per page of rows
  (PAGE_SIZE): an annotator × item whose rows are further apart than a page is compared page by page.

Every bad row is reported by line with its reason; the file is imported whole or not at all unless ``skip_invalid``.
Rows are written in pages (bulk inserts) inside one transaction, so memory follows the page size, not the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.imports.label_rows import ParsedLabel, check_against_item, parse_label, relocate_label
from annotation.imports.label_writes import SOURCE, annotation_counts_refresh, label_page_write
from annotation.models import Annotation, JudgmentValue
from config import events
from config.bulk import checks_per_statement
from projects.imports.annotators import label_annotators_resolve
from projects.imports.items import ImportRejected, RowError
from projects.models import Item, Project, Response
from projects.services import project_mark_labelling_started

PAGE_SIZE = 1000


@dataclass
class LabelImportResult:
    created: int = 0  # annotations created
    revisions: int = 0  # later rows for an annotator × item already labelled in this file, kept as revisions
    skipped: int = 0
    unchanged: int = 0  # labels an earlier import wrote, given again as they are: nothing written
    revised: int = 0  # labels an earlier import wrote, given again changed: revised, never doubled
    identities_created: int = 0  # imported annotators met for the first time in this project
    errors: list[RowError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how another tool's file was read, where the lead chose


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, text in enumerate(lines, start=1):
        if text.strip():
            yield number, text


@transaction.atomic
@checks_per_statement()  # inside the transaction: foreign keys checked per statement, deferral restored at the end
def labels_import(  # noqa: C901
    *,
    project: Project,
    lines: Iterable[str],
    skip_invalid: bool = False,
    progress: Callable[[int], None] | None = None,
    allow_members: bool = False,
    allow_leads: bool = False,
    source: str = "native",
) -> LabelImportResult:
    """Import labels; raise ImportRejected (nothing written) on any bad row unless ``skip_invalid``.

    Whom a row's name files the label under: ``projects.imports.annotators.label_annotators_resolve`` (the
    project's imported identity for (``source``, name); members by username only with ``allow_members`` /
    ``allow_leads``).

    ``progress`` is called with the number of lines read so far after each page.
    """
    criteria = {c.name: c.pk for c in project.criteria.all()}
    criterion_names = list(criteria)
    result = LabelImportResult()
    annotators: dict[str, AbstractBaseUser] = {}
    # (item, annotator) → annotation id, for labels written by this import (revised by later rows).
    written: dict[tuple[int, int], int] = {}
    seen: set[tuple[int, int]] = set()
    touched_items: set[int] = set()
    numbered = _numbered(lines)
    lines_read = 0
    while page := list(islice(numbered, PAGE_SIZE)):
        lines_read = page[-1][0]
        labels: list[ParsedLabel] = []
        for number, text in page:
            try:
                labels.append(parse_label(number, text, project, criterion_names))
            except ValueError as exc:
                result.errors.append(RowError(number, str(exc)))
        items = dict(
            Item.objects.filter(project=project, external_id__in={lb.item_external_id for lb in labels}).values_list(
                "external_id", "id"
            )
        )
        responses: dict[int, dict[int, int]] = {}
        # Texts and models only when a row names its responses (an export of another project): they are large.
        named = any(lb.responses is not None for lb in labels)
        identities: dict[int, dict[int, tuple[str, str]]] = {}
        for item_id, position, response_id, *identity in Response.objects.filter(
            item_id__in=items.values()
        ).values_list("item_id", "position", "id", *(("text", "model_name") if named else ())):
            responses.setdefault(item_id, {})[position] = response_id
            if named:
                identities.setdefault(item_id, {})[position] = (identity[0], identity[1])
        resolved, counts = label_annotators_resolve(
            project=project,
            usernames={lb.annotator for lb in labels} - set(annotators),
            source=source,
            allow_members=allow_members,
            allow_leads=allow_leads,
        )
        annotators.update(resolved)
        result.identities_created += counts["identities_created"]
        # (item, annotator) → (annotation id, its source) for labels that were in the project before this import.
        # Asked by item alone: with the annotators in the query too, a planner whose statistics predate the import
        # walks each annotator's whole index, which this import keeps growing.
        page_annotators = {annotators[lb.annotator].pk for lb in labels}
        existing = {
            (item_id, annotator_id): (pk, origin)
            for pk, item_id, annotator_id, origin in Annotation.objects.filter(item_id__in=items.values()).values_list(
                "pk", "item_id", "annotator_id", "source"
            )
            if annotator_id in page_annotators
        }
        candidates: list[tuple[ParsedLabel, int, int]] = []
        for label in labels:
            found = items.get(label.item_external_id)
            if found is None:
                result.errors.append(RowError(label.line, f"no item with id {json.dumps(label.item_external_id)}"))
                continue
            item_id = found
            annotator_id = annotators[label.annotator].pk
            key = (item_id, annotator_id)
            if key in existing and key not in written and existing[key][1] != SOURCE:
                result.errors.append(
                    RowError(
                        label.line,
                        f"{label.annotator} already labelled this item in Penumbra (imports never overwrite such a "
                        "label)",
                    )
                )
                continue
            try:
                relocate_label(label, identities.get(item_id, {}), project.likert_points)
                check_against_item(label, sorted(responses.get(item_id, {})), criterion_names)
            except ValueError as exc:
                result.errors.append(RowError(label.line, str(exc)))
                continue
            candidates.append((label, item_id, annotator_id))
        again = {key: existing[key][0] for key in {(i, a) for _, i, a in candidates} if key in existing}
        again = {key: pk for key, pk in again.items() if key not in written}
        same = _unchanged(again, candidates, responses, criteria)
        result.unchanged += len(same)
        result.revised += len(again) - len(same)
        accepted: list[tuple[ParsedLabel, int, int]] = []
        for label, item_id, annotator_id in candidates:
            key = (item_id, annotator_id)
            if key in same:
                continue
            if key in seen:
                result.revisions += 1
            seen.add(key)
            accepted.append((label, item_id, annotator_id))
        if result.errors and not skip_invalid:
            # Keep reading to name every bad row, but write nothing more: the transaction is rolled back anyway.
            if progress is not None:
                progress(lines_read)
            continue
        # Labels of an earlier import that this file changes are revised like labels written by an earlier page.
        written.update({key: pk for key, pk in again.items() if key not in same})
        result.created += label_page_write(
            project=project, accepted=accepted, criteria=criteria, responses=responses, written=written
        )
        touched_items.update(item_id for _, item_id, _ in accepted)
        if progress is not None:
            progress(lines_read)
    result.skipped = len(result.errors)
    if result.errors and not skip_invalid:
        raise ImportRejected(sorted(result.errors, key=lambda e: e.line))
    if result.created or result.revised:
        annotation_counts_refresh(item_ids=sorted(touched_items))
        project_mark_labelling_started(project_id=project.pk)
        events.labels_changed(project_id=project.pk, item_ids=touched_items)
    return result


def _judgment_of(label: ParsedLabel, criteria: dict[str, int], positions: dict[int, int]) -> tuple[Any, ...]:
    values = frozenset(
        (positions[position], criteria[criterion], mu, nu) for (position, criterion), (mu, nu) in label.values.items()
    )
    return (label.choice, label.likert, values)


def _unchanged(
    again: dict[tuple[int, int], int],
    candidates: list[tuple[ParsedLabel, int, int]],
    responses: dict[int, dict[int, int]],
    criteria: dict[str, int],
) -> set[tuple[int, int]]:
    """The annotator × items of an earlier import whose last row in this page is the label they already hold."""
    if not again:
        return set()
    last: dict[tuple[int, int], ParsedLabel] = {}
    for label, item_id, annotator_id in candidates:
        last[(item_id, annotator_id)] = label
    values: dict[int, set[tuple[int, int, int, int]]] = {pk: set() for pk in again.values()}
    for annotation_id, response_id, criterion_id, mu, nu in JudgmentValue.objects.filter(
        annotation_id__in=again.values()
    ).values_list("annotation_id", "response_id", "criterion_id", "mu", "nu"):
        values[annotation_id].add((response_id, criterion_id, mu, nu))
    stored = {
        pk: (choice, likert, frozenset(values[pk]))
        for pk, choice, likert in Annotation.objects.filter(pk__in=again.values()).values_list(
            "pk", "binary_choice", "likert_value"
        )
    }
    return {key for key, pk in again.items() if stored[pk] == _judgment_of(last[key], criteria, responses[key[0]])}
