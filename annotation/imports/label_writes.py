"""The write side of the label import (annotation.imports.labels): one page of checked labels into annotations,
their values and revisions, and the items' label counts at the end.

On PostgreSQL every row goes in by COPY (config.bulk), new annotations with ids taken from the sequence first: a
model instance and an INSERT … RETURNING per row cost more than the database spends storing it. Labels that revise
an annotation this import (or an earlier one) wrote go through the ORM; they are few.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.imports.label_rows import INT_MAX, ParsedLabel
from annotation.models import Annotation, AnnotationRevision, JudgmentValue
from config.bulk import insert_rows, is_postgresql, reserve_ids
from projects.models import Item, Project

BATCH = 1000
_ENCODER = json.JSONEncoder(ensure_ascii=False)
REVISION_REASON = "import"
SOURCE = "import"


def _payload(label: ParsedLabel, response_order: list[int]) -> dict[str, Any]:
    """The same shape annotation_save writes, plus the label's own timestamp."""
    return {
        "mode": label.mode,
        "values": [
            {"response": p, "criterion": c, "mu": mu, "nu": nu} for (p, c), (mu, nu) in sorted(label.values.items())
        ],
        "binary_choice": label.choice,
        "likert_value": label.likert,
        "response_order": response_order,
        "accepted": False,
        "source": SOURCE,
        "suggestion_shown": label.suggestion_shown,
        "timestamp": label.timestamp.isoformat() if label.timestamp else None,
    }


def label_page_write(
    *,
    project: Project,
    accepted: list[tuple[ParsedLabel, int, int]],
    criteria: dict[str, int],
    responses: dict[int, dict[int, int]],
    written: dict[tuple[int, int], int],
) -> int:
    """Write a page of labels in file order; returns how many annotations were created.

    Labels of one annotator × item are revisions: the last one becomes (or updates) the annotation, each one is
    an AnnotationRevision. ``written`` maps the annotator × items written by earlier pages to their annotation.
    """
    groups: dict[tuple[int, int], list[ParsedLabel]] = {}
    for label, item_id, annotator_id in accepted:
        groups.setdefault((item_id, annotator_id), []).append(label)
    if not groups:
        return 0
    fresh = [key for key in groups if key not in written]
    again = [key for key in groups if key in written]
    now = timezone.now()
    pk_of = dict(zip(fresh, _create(project, fresh, groups, responses, now), strict=True))
    earlier = Annotation.objects.in_bulk([written[key] for key in again])
    # Per annotator × item: revisions already stored, and whether one of them was saved with a suggestion shown.
    before: dict[tuple[int, int], tuple[int, bool]] = {key: (0, False) for key in fresh}
    for key in again:
        annotation = earlier[written[key]]
        before[key] = (annotation.revision_count, annotation.suggestion_shown)
        _revise(annotation, groups[key], responses[key[0]])
        annotation.updated_at = now
        pk_of[key] = annotation.pk
    if earlier:
        Annotation.objects.bulk_update(list(earlier.values()), [*_REVISED_FIELDS, "updated_at"], batch_size=BATCH)
        JudgmentValue.objects.filter(annotation_id__in=list(earlier)).delete()
    written.update(pk_of)

    insert_rows(
        JudgmentValue,
        ["annotation_id", "response_id", "criterion_id", "mu", "nu"],
        [
            (pk_of[key], responses[key[0]][position], criteria[criterion], mu, nu)
            for key, labels in groups.items()
            for (position, criterion), (mu, nu) in labels[-1].values.items()
        ],
    )
    insert_rows(
        AnnotationRevision,
        [
            "annotation_id",
            "number",
            "payload",
            "suggestion_shown",
            "accepted_suggestion",
            "time_spent_ms",
            "reason",
            "created_at",
        ],
        _revision_rows(groups, pk_of, before, responses, now),
    )
    return len(fresh)


#: The columns of a new annotation, as _create writes them.
_COLUMNS = (
    "id", "project_id", "item_id", "annotator_id", "mode", "response_order", "order_known", "binary_choice",
    "likert_value", "suggestion_shown", "accepted_suggestion", "time_spent_ms", "revision_count", "source",
    "created_at", "updated_at",
)  # fmt: skip


def _create(
    project: Project,
    fresh: list[tuple[int, int]],
    groups: dict[tuple[int, int], list[ParsedLabel]],
    responses: dict[int, dict[int, int]],
    now: datetime,
) -> list[int]:
    """Create the annotations of ``fresh`` annotator × items; returns their ids in the same order.

    A model instance and an INSERT … RETURNING per row cost more than the database spends storing it: on PostgreSQL
    the ids come from the sequence and the rows go in by COPY. The creation time is the first row's own timestamp
    (a label's creation is when it was first made); updated_at is "now", so the aggregates' staleness check
    (annotation newer than aggregate) sees the import.
    """
    if not is_postgresql():
        created = Annotation.objects.bulk_create(
            [_annotation(project, key, groups[key], responses) for key in fresh], batch_size=BATCH
        )
        dated = []
        for key, annotation in zip(fresh, created, strict=True):
            if (stamp := groups[key][0].timestamp) is not None:
                annotation.created_at = stamp
                dated.append(annotation)
        if dated:
            Annotation.objects.bulk_update(dated, ["created_at"], batch_size=BATCH)
        return [annotation.pk for annotation in created]
    ids = reserve_ids(Annotation, len(fresh))
    rows = []
    for pk, key in zip(ids, fresh, strict=True):
        a = _Fresh()
        _revise(a, groups[key], responses[key[0]])
        rows.append(
            (pk, project.pk, key[0], key[1], project.mode, _ENCODER.encode(a.response_order), a.order_known,
             a.binary_choice, a.likert_value, a.suggestion_shown, False, a.time_spent_ms, a.revision_count, SOURCE,
             groups[key][0].timestamp or now, now)
        )  # fmt: skip
    insert_rows(Annotation, _COLUMNS, rows)
    return ids


@dataclass(slots=True)
class _Fresh:
    """What _revise sets on a new annotation that goes in by COPY rather than as a model instance."""

    response_order: list[int] = field(default_factory=list)
    order_known: bool = True
    binary_choice: int | None = None
    likert_value: int | None = None
    suggestion_shown: bool = False
    time_spent_ms: int = 0
    revision_count: int = 0


_REVISED_FIELDS = (
    "response_order",
    "order_known",
    "binary_choice",
    "likert_value",
    "suggestion_shown",
    "time_spent_ms",
    "revision_count",
)


def _order(label: ParsedLabel, positions: dict[int, int]) -> list[int]:
    return label.response_order or sorted(positions)


def _annotation(
    project: Project, key: tuple[int, int], labels: list[ParsedLabel], responses: dict[int, dict[int, int]]
) -> Annotation:
    item_id, annotator_id = key
    annotation = Annotation(
        project=project,
        item_id=item_id,
        annotator_id=annotator_id,
        mode=project.mode,
        suggestion_shown=False,
        time_spent_ms=0,
        revision_count=0,
        source=SOURCE,
    )
    _revise(annotation, labels, responses[item_id])
    return annotation


def _revise(annotation: Annotation | _Fresh, labels: list[ParsedLabel], positions: dict[int, int]) -> None:
    """Apply ``labels`` (file order) to ``annotation`` as annotation_save would: the last one's judgment stands,
    time adds up, and once a suggestion was shown the annotation is never blind again."""
    last = labels[-1]
    annotation.response_order = _order(last, positions)
    annotation.order_known = last.response_order is not None
    annotation.binary_choice = last.choice
    annotation.likert_value = last.likert
    annotation.suggestion_shown = annotation.suggestion_shown or any(lb.suggestion_shown for lb in labels)
    annotation.time_spent_ms = min(annotation.time_spent_ms + sum(lb.time_spent_ms for lb in labels), INT_MAX)
    annotation.revision_count += len(labels)


def _revision_rows(
    groups: dict[tuple[int, int], list[ParsedLabel]],
    pk_of: dict[tuple[int, int], int],
    before: dict[tuple[int, int], tuple[int, bool]],
    responses: dict[int, dict[int, int]],
    now: datetime,
) -> Iterator[tuple[Any, ...]]:
    for key, labels in groups.items():
        number, shown = before[key]
        for label in labels:
            # Blind until the first revision saved with a suggestion on screen, then never again.
            shown = shown or label.suggestion_shown
            number += 1
            yield (
                pk_of[key],
                number,
                _ENCODER.encode(_payload(label, _order(label, responses[key[0]]))),
                shown,
                False,
                label.time_spent_ms,
                REVISION_REASON,
                now,
            )


def annotation_counts_refresh(*, item_ids: list[int]) -> None:
    """Each item's annotation_count, counted again from its annotations."""
    saved = (
        Annotation.objects.filter(item_id=OuterRef("pk")).order_by().values("item_id").annotate(n=Count("id"))
    ).values("n")
    for start in range(0, len(item_ids), BATCH):
        Item.objects.filter(pk__in=item_ids[start : start + BATCH]).update(
            annotation_count=Coalesce(Subquery(saved), 0)
        )
