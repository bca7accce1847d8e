"""Imports of files from other tools: convert (projects.formats), then the ordinary import services.

The converted rows go through projects.importing.items_import and annotation.label_import.labels_import unchanged,
so every rule of those services (ids, duplicates, per-mille values, modes, never overwriting a label) holds for
them too. Errors name the record of the original file: conversion errors directly, and errors the services find
in a converted row through the record that row came from. The whole file is imported or nothing, unless bad
records may be skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.label_import import LabelImportResult, labels_import
from projects.formats import FORMATS, NATIVE, Converted, Source, convert_items, convert_labels
from projects.importing import ImportRejected, ImportResult, Progress, RowError, items_import
from projects.models import Project

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValidationError({"format": f"Expected one of {', '.join(FORMATS)}."})


def _errors(converted: Converted) -> list[RowError]:
    return [RowError(source.number, source.describe(message)) for source, message in converted.errors]


def _traced(errors: list[RowError], sources: list[Source]) -> list[RowError]:
    """Errors on converted rows (numbered 1..n) named by the records those rows came from."""
    traced = []
    for error in errors:
        source = sources[error.line - 1] if 0 < error.line <= len(sources) else Source(error.line, "")
        traced.append(RowError(source.number, source.describe(error.message) if source.name else error.message))
    return traced


def _rejected(errors: list[RowError]) -> ImportRejected:
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
) -> ImportResult:
    """Items from another tool's file; raises ImportRejected (nothing written) on bad records unless skipping."""
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
    converted = convert_items(fmt, handle)
    failed = _errors(converted)
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
        raise _rejected(failed + _traced(rejected.errors, sources)) from None
    if failed and not skip_invalid:
        raise _rejected(failed)
    result.errors = sorted(failed + _traced(result.errors, sources), key=lambda e: e.line)
    result.invalid += len(failed)
    return result


@transaction.atomic
def labels_import_formatted(
    *,
    project: Project,
    fmt: str,
    handle: IO[bytes],
    skip_invalid: bool = False,
    progress: Callable[[int], None] | None = None,
) -> LabelImportResult:
    """Labels from another tool's file, converted for the project's mode; ImportRejected on bad records."""
    check_format(fmt)
    if fmt == NATIVE:
        lines = (raw.decode("utf-8", errors="replace") for raw in handle)
        return labels_import(project=project, lines=lines, skip_invalid=skip_invalid, progress=progress)
    converted = convert_labels(fmt, handle, mode=project.mode, likert_points=project.likert_points, seed=project.seed)
    failed = _errors(converted)
    sources = [source for source, _ in converted.rows]
    try:
        result = labels_import(
            project=project,
            lines=[_ENCODER.encode(row) for _, row in converted.rows],
            skip_invalid=skip_invalid,
            progress=progress,
        )
    except ImportRejected as rejected:
        raise _rejected(failed + _traced(rejected.errors, sources)) from None
    if failed and not skip_invalid:
        raise _rejected(failed)
    result.errors = sorted(failed + _traced(result.errors, sources), key=lambda e: e.line)
    result.skipped += len(failed)
    return result
