"""Setting up a method study: the lead's choices checked, the design built (annotation.method_study.design) and
stored, the project switched to crossover mode. The plan is written once and never edited: it is the audit record.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F

from annotation.claims import assignment_claim_again
from annotation.method_study import design as crossover_design
from annotation.method_study import selectors as crossover_selectors
from annotation.method_study.models import MethodStudy, StudyCell
from annotation.models import Annotation, Assignment
from config import events
from config.bulk import insert_rows
from config.input_limits import whole_number
from projects.models import Item, Membership, Project
from projects.selectors import item_with_responses

STUDY_METHODS = (Project.Mode.IFS, Project.Mode.BINARY, Project.Mode.LIKERT)
#: The project setting's bound (projects.services.check_project_settings and the model's constraint).
REPEAT_RATE_MAX = 0.5


def _whole(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        return whole_number(raw)
    return None


def _ids(raw: Any, field: str, errors: dict[str, str]) -> list[int]:
    if not isinstance(raw, list | tuple):
        errors[field] = "Expected a list of ids."
        return []
    ids = [_whole(value) for value in raw]
    if any(value is None for value in ids):
        errors[field] = "Expected whole-number ids."
        return []
    if len(set(ids)) != len(ids):
        errors[field] = "An id is listed twice."
    return [value for value in ids if value is not None]


def _rate(raw: Any, default: float, errors: dict[str, str]) -> float:
    if raw in (None, ""):
        return default
    try:
        rate = float(raw) if not isinstance(raw, bool) else math.nan
    except (TypeError, ValueError):
        rate = math.nan
    if not (math.isfinite(rate) and 0.0 <= rate <= REPEAT_RATE_MAX):
        errors["repeat_rate"] = f"Expected a number from 0 to {REPEAT_RATE_MAX:g}."
        return default
    return rate


def check_method_study(
    *,
    project: Project,
    methods: Any,
    item_ids: Any,
    annotator_ids: Any,
    block_size: Any,
    likert_points: Any,
    repeat_rate: Any = None,
) -> tuple[list[str], list[int], list[int], int, int, float]:
    """Validate the lead's choices; raise ValidationError naming each bad field. Returns the cleaned values."""
    errors: dict[str, str] = {}
    rate = _rate(repeat_rate, project.repeat_rate, errors)
    if MethodStudy.objects.filter(project=project).exists():
        errors["__all__"] = "This project already has a method study."
    elif Annotation.objects.filter(project=project).exists():
        errors["__all__"] = (
            "This project already has labels: a crossover study plans every judgment from the start, so set it up "
            "in a project without labels."
        )
    if not isinstance(methods, list | tuple) or any(m not in STUDY_METHODS for m in methods):
        errors["methods"] = f"Expected a list of methods from {', '.join(STUDY_METHODS)}."
        clean_methods: list[str] = []
    else:
        clean_methods = [str(m) for m in methods]
        if len(set(clean_methods)) != len(clean_methods):
            errors["methods"] = "A method is listed twice."
        elif len(clean_methods) < 2:
            errors["methods"] = "Pick at least two methods to compare."
    points = _whole(likert_points) if likert_points not in (None, "") else project.likert_points
    if points is None or not 3 <= points <= 11 or points % 2 == 0:
        errors["likert_points"] = "Expected an odd whole number from 3 to 11."
        points = project.likert_points
    items = _ids(item_ids, "item_ids", errors)
    annotators = _ids(annotator_ids, "annotator_ids", errors)
    found_items = Item.objects.filter(project=project, pk__in=items).annotate(n=Count("responses"))
    if items and found_items.count() != len(items):
        errors["item_ids"] = "Some items are not in this project."
    elif Project.Mode.LIKERT in clean_methods and found_items.exclude(n=2).exists():
        errors["item_ids"] = "A side-by-side Likert scale compares two responses; some items have another number."
    members = Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR, user_id__in=annotators)
    if annotators and members.count() != len(annotators):
        errors["annotator_ids"] = "Some of these people are not annotators of this project."
    size = _whole(block_size) if block_size not in (None, "") else None
    if block_size not in (None, "") and (size is None or size < 1):
        errors["block_size"] = "Expected a whole number of at least 1."
    if not errors:
        size = size or crossover_design.default_block_size(
            n_methods=len(clean_methods), n_annotators=len(annotators), n_items=len(items)
        )
        problems = crossover_design.design_problems(
            n_methods=len(clean_methods), n_annotators=len(annotators), n_items=len(items), block_size=size
        )
        if problems:
            errors["block_size"] = " ".join(problems)
    if errors:
        raise ValidationError(errors)
    assert size is not None
    return clean_methods, sorted(items), sorted(annotators), size, int(points), rate


@transaction.atomic
def method_study_create(
    *,
    project: Project,
    created_by: AbstractBaseUser | AnonymousUser | None,
    methods: Sequence[str],
    item_ids: Sequence[int],
    annotator_ids: Sequence[int],
    block_size: int | None = None,
    likert_points: int | None = None,
    repeat_rate: float | None = None,
) -> MethodStudy:
    """Plan a crossover study of ``methods`` on these items and annotators and switch the project to it.

    Each annotator works through one block per method, in the order of their row of a Williams design, and every
    item is judged under every method by someone (annotation.method_study.design). The project's overlap becomes the
    most judgments the plan gives one item, so a planned judgment always has room. ``block_size`` None: the
    smallest that covers every item.

    ``repeat_rate`` (None: the project's) is stored on the project, the one setting of unannounced repeats: a
    drawn label comes back to its annotator after the project's repeat delays, judged with the method of its
    original cell (``annotation.queue.services``), and the report reads self-consistency per method from them.
    """
    project = Project.objects.select_for_update().get(pk=project.pk)
    clean_methods, items, annotators, size, points, rate = check_method_study(
        project=project,
        methods=list(methods),
        item_ids=list(item_ids),
        annotator_ids=list(annotator_ids),
        block_size=block_size,
        likert_points=likert_points,
        repeat_rate=repeat_rate,
    )
    cells = crossover_design.design_build(
        n_methods=len(clean_methods), n_annotators=len(annotators), item_ids=items, block_size=size, seed=project.seed
    )
    study = MethodStudy.objects.create(
        project=project,
        methods=clean_methods,
        block_size=size,
        previous_mode=project.mode,
        created_by_id=created_by.pk if created_by is not None and created_by.is_authenticated else None,
    )
    rows = len(crossover_design.williams_square(len(clean_methods)))
    insert_rows(
        StudyCell,
        ("study_id", "annotator_id", "item_id", "method", "block", "sequence", "order_row"),
        (
            (
                study.pk,
                annotators[cell.annotator],
                cell.item,
                clean_methods[cell.method],
                cell.block,
                cell.sequence,
                cell.annotator % rows,
            )
            for cell in cells
        ),
    )
    per_item = Counter(cell.item for cell in cells)
    Project.objects.filter(pk=project.pk).update(
        mode=Project.Mode.CROSSOVER,
        likert_points=points,
        repeat_rate=rate,
        overlap=max(per_item.values()),
        settings_version=F("settings_version") + 1,
    )
    events.settings_changed(project_id=project.pk)
    study.project.refresh_from_db()  # the caller shows the study with its project's new mode and repeat rate
    return study


def assignment_claim_planned(
    *, project: Project, annotator: AbstractBaseUser, now: datetime, exclude_item_ids: Sequence[int] = ()
) -> Assignment | None:
    """The claim of a crossover project's queue (called by annotation.services inside its transaction): the
    annotator's next planned item (:func:`crossover_selectors.design_next_item`), with its responses; their own
    expired claim on it is taken again with the response order they were shown. None when their share is done.
    The overlap was set so that every planned judgment has room: no room check is needed."""
    item_id = crossover_selectors.design_next_item(
        project=project, annotator_id=int(annotator.pk), exclude_item_ids=exclude_item_ids
    )
    item = None if item_id is None else item_with_responses(project=project, item_id=item_id)
    if item is None:
        return None
    assignment = assignment_claim_again(project=project, item=item, annotator=annotator, now=now)
    assignment.item = item
    return assignment
