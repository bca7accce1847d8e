"""The per-participant export of a study link as CSV or JSON Lines, streamed a line at a time.

One writer for the lead's download, the API and ``manage.py study_export``, so the three never differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from annotation.crowd.models import StudyLink
from annotation.crowd.selectors import EXPORT_FIELDS, participant_export_rows
from config.csv_safe import csv_lines

FORMATS = ("csv", "jsonl")
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl; charset=utf-8"}


def participant_export_lines(*, link: StudyLink, export_format: str) -> Iterator[str]:
    if export_format not in FORMATS:
        raise ValueError(f"Expected one of {', '.join(FORMATS)}.")
    rows = participant_export_rows(link=link)
    if export_format == "jsonl":
        for row in rows:
            yield json.dumps(row, ensure_ascii=False) + "\n"
        return
    yield from csv_lines(EXPORT_FIELDS, rows)


def participant_export_filename(*, link: StudyLink, export_format: str) -> str:
    return f"{link.project.slug}-study-{link.pk}-participants.{export_format}"
