"""Imports of labels from other tools' files: convert for the project's mode (projects.formats), then labels_import.

Errors name the record of the original file, as for items (projects.imports.formats).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Any

from django.db import transaction

from annotation.imports.labels import LabelImportResult, labels_import
from projects.formats import convert_labels
from projects.imports.formats import formatted_import
from projects.models import Project


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
    result, failed = formatted_import(
        fmt=fmt,
        handle=handle,
        reading=reading,
        skip_invalid=skip_invalid,
        convert=lambda options: convert_labels(
            fmt, handle, mode=project.mode, likert_points=project.likert_points, seed=project.seed, options=options
        ),
        run=lambda lines, _total: labels_import(
            project=project,
            lines=lines,
            skip_invalid=skip_invalid,
            progress=progress,
            allow_members=allow_members,
            allow_leads=allow_leads,
            source=fmt,
        ),
    )
    result.skipped += failed
    return result
