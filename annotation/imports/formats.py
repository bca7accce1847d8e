"""Imports of labels from other tools' files: convert for the project's mode (projects.formats), then labels_import.

Errors name the record of the original file, as for items (projects.imports.formats).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import IO, Any

from django.db import transaction

from annotation.imports.labels import LabelImportResult, labels_import
from projects.formats import NATIVE, convert_labels
from projects.imports.formats import check_format, conversion_errors, format_options, rejected_with, traced_errors
from projects.imports.items import ImportRejected
from projects.models import Project

_ENCODER = json.JSONEncoder(ensure_ascii=False)


@transaction.atomic
def labels_import_formatted(
    *,
    project: Project,
    fmt: str,
    handle: IO[bytes],
    skip_invalid: bool = False,
    progress: Callable[[int], None] | None = None,
    allow_members: bool = False,
    allow_leads: bool = False,
    reading: Mapping[str, Any] | None = None,
) -> LabelImportResult:
    """Labels from another tool's file, converted for the project's mode; ImportRejected on bad records.

    ``reading``: the lead's options for reading the file (scheme, ratings_rule, statuses, items_key, scale)."""
    check_format(fmt)
    options = format_options(reading)
    if fmt == NATIVE:
        lines = (raw.decode("utf-8", errors="replace") for raw in handle)
        return labels_import(
            project=project,
            lines=lines,
            skip_invalid=skip_invalid,
            progress=progress,
            allow_members=allow_members,
            allow_leads=allow_leads,
            source=fmt,
        )
    converted = convert_labels(
        fmt, handle, mode=project.mode, likert_points=project.likert_points, seed=project.seed, options=options
    )
    failed = conversion_errors(converted)
    sources = [source for source, _ in converted.rows]
    try:
        result = labels_import(
            project=project,
            lines=[_ENCODER.encode(row) for _, row in converted.rows],
            skip_invalid=skip_invalid,
            progress=progress,
            allow_members=allow_members,
            allow_leads=allow_leads,
            source=fmt,
        )
    except ImportRejected as rejected:
        raise rejected_with(failed + traced_errors(rejected.errors, sources)) from None
    if failed and not skip_invalid:
        raise rejected_with(failed)
    result.errors = sorted(failed + traced_errors(result.errors, sources), key=lambda e: e.line)
    result.skipped += len(failed)
    result.notes = converted.notes
    return result
