"""Imports of items from other tools' files: convert (projects.formats), then the ordinary import service.

The converted rows go through projects.imports.items.items_import (and, for labels, annotation.imports.formats through
annotation.imports.labels.labels_import) unchanged,
so every rule of those services (ids, duplicates, per-mille values, modes, never overwriting a label) holds for
them too. Errors name the record of the original file: conversion errors directly, and errors the services find
in a converted row through the record that row came from. The whole file is imported or nothing, unless bad
records may be skipped. Converters read the whole file (a JSON array cannot be streamed line by line); native
JSON Lines keep the services' streaming.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any, Protocol, TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction

from projects.formats import FORMATS, NATIVE, Converted, Options, OptionsInvalid, Source, convert_items, options_from
from projects.imports.items import ImportRejected, ImportResult, Progress, RowError, items_import
from projects.models import Project

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValidationError({"format": f"Expected one of {', '.join(FORMATS)}."})


def format_options(raw: Mapping[str, Any] | None) -> Options:
    """The lead's reading options (projects.formats.Options) from a request or a job; ValidationError names bad ones."""
    try:
        return options_from(raw or {})
    except OptionsInvalid as exc:
        raise ValidationError(exc.errors) from None


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


class _Traceable(Protocol):
    errors: list[RowError]
    notes: list[str]


_Result = TypeVar("_Result", bound=_Traceable)


def formatted_import(
    *,
    fmt: str,
    handle: IO[bytes],
    reading: Mapping[str, Any] | None,
    skip_invalid: bool,
    convert: Callable[[Options], Converted],
    run: Callable[[Iterable[str], int | None], _Result],
) -> tuple[_Result, int]:
    """The import of items or of labels from another tool's file: ``convert`` reads the file with the lead's options,
    ``run`` (the import service, given the JSON lines and, for a converted file, their count) writes them.

    Returns the service's result, its errors named by the original records, and how many records the conversion
    rejected (the caller counts them with its own skipped rows). Native JSON Lines stream to ``run`` unconverted."""
    check_format(fmt)
    options = format_options(reading)
    if fmt == NATIVE:
        return run((raw.decode("utf-8", errors="replace") for raw in handle), None), 0
    converted = convert(options)
    failed = conversion_errors(converted)
    sources = [source for source, _ in converted.rows]
    try:
        # A savepoint: the service's own transaction; the outer one rolls back if conversion found bad records.
        result = run([_ENCODER.encode(row) for _, row in converted.rows], len(sources))
    except ImportRejected as rejected:
        raise rejected_with(failed + traced_errors(rejected.errors, sources)) from None
    if failed and not skip_invalid:
        raise rejected_with(failed)
    result.errors = sorted(failed + traced_errors(result.errors, sources), key=lambda e: e.line)
    result.notes = converted.notes
    return result, len(failed)


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
    reading: Mapping[str, Any] | None = None,
) -> ImportResult:
    """Items from another tool's file; raises ImportRejected (nothing written) on bad records unless skipping.

    ``reading``: the lead's options for reading the file (scheme, ratings_rule, statuses, items_key, scale)."""
    result, failed = formatted_import(
        fmt=fmt,
        handle=handle,
        reading=reading,
        skip_invalid=skip_invalid,
        convert=lambda options: convert_items(
            fmt, handle, options=options, seed=project.seed, trl_chosen_as=trl_chosen_as
        ),
        run=lambda lines, total: items_import(
            project=project,
            lines=lines,
            on_duplicate=on_duplicate,
            skip_invalid=skip_invalid,
            trl_chosen_as=trl_chosen_as,
            progress=progress,
            total_lines=total,
        ),
    )
    result.invalid += failed
    return result
