"""Imports of items from other tools' files: convert (projects.formats), then the ordinary import service.

The converted rows go through projects.importing.items_import (and, for labels, annotation.label_formats through
annotation.label_import.labels_import) unchanged,
so every rule of those services (ids, duplicates, per-mille values, modes, never overwriting a label) holds for
them too. Errors name the record of the original file: conversion errors directly, and errors the services find
in a converted row through the record that row came from. The whole file is imported or nothing, unless bad
records may be skipped. Converters read the whole file (a JSON array cannot be streamed line by line); native
JSON Lines keep the services' streaming.
"""

from __future__ import annotations

import json
from typing import IO, Any

from django.core.exceptions import ValidationError
from django.db import transaction

from projects.formats import FORMATS, NATIVE, Converted, Source, convert_items
from projects.importing import ImportRejected, ImportResult, Progress, RowError, items_import
from projects.models import Project

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValidationError({"format": f"Expected one of {', '.join(FORMATS)}."})


def conversion_errors(converted: Converted) -> list[RowError]:
    return [RowError(source.number, source.describe(message)) for source, message in converted.errors]


def traced_errors(errors: list[RowError], sources: list[Source]) -> list[RowError]:
    """Errors on converted rows (numbered 1..n) named by the records those rows came from."""
    traced = []
    for error in errors:
        source = sources[error.line - 1] if 0 < error.line <= len(sources) else Source(error.line, "")
        traced.append(RowError(source.number, source.describe(error.message) if source.name else error.message))
    return traced


def rejected_with(errors: list[RowError]) -> ImportRejected:
    return ImportRejected(sorted(errors, key=lambda e: e.line))


@transaction.atomic
def items_import_formatted(
    *,
    project: Project,
    fmt: str,
    handle: IO[bytes],
    on_duplicate: str = "reject",
    skip_invalid: bool = False,
    trl_chosen_as: str = "gold",
    progress: Progress | None = None,
    converter_options: dict[str, Any] | None = None,
) -> ImportResult:
    """Items from another tool's file; raises ImportRejected (nothing written) on bad records unless skipping.

    ``converter_options`` (the lead's choices for another tool's file: ``ratings_rule``, ``scheme``) are passed to the
    converter as keywords, only when given."""
    check_format(fmt)
    if fmt == NATIVE:
        lines = (raw.decode("utf-8", errors="replace") for raw in handle)
        return items_import(
            project=project,
            lines=lines,
            on_duplicate=on_duplicate,
            skip_invalid=skip_invalid,
            trl_chosen_as=trl_chosen_as,
            progress=progress,
        )
    converted = convert_items(fmt, handle, **(converter_options or {}))
    failed = conversion_errors(converted)
    sources = [source for source, _ in converted.rows]
    try:
        # A savepoint: the service's own transaction; the outer one rolls back if conversion found bad records.
        result = items_import(
            project=project,
            lines=[_ENCODER.encode(row) for _, row in converted.rows],
            on_duplicate=on_duplicate,
            skip_invalid=skip_invalid,
            trl_chosen_as=trl_chosen_as,
            progress=progress,
            total_lines=len(sources),
        )
    except ImportRejected as rejected:
        raise rejected_with(failed + traced_errors(rejected.errors, sources)) from None
    if failed and not skip_invalid:
        raise rejected_with(failed)
    result.errors = sorted(failed + traced_errors(result.errors, sources), key=lambda e: e.line)
    result.invalid += len(failed)
    return result
