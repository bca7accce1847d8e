"""The one CSV writer: every CSV Penumbra writes goes through ``csv_lines``, so every cell is safe in a spreadsheet.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel, LibreOffice and Google
Sheets as a formula (CSV injection: ``=HYPERLINK(…)`` in an item id becomes a link, ``@SUM(…)`` a computation). Such a
text cell gets a leading single quote, as OWASP recommends: the spreadsheet shows the text, and a program reading the
CSV can strip the quote.

The rule escapes text only: numbers (int, float, Decimal) are written as numbers, so a figure of -0.5 stays a number,
and so does text that is nothing but a plain decimal number ("-0.5", "1e-3"), which no spreadsheet reads as a formula.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(value: Any) -> Any:
    """``value`` as a cell no spreadsheet evaluates: formula-like text gets a leading quote; the rest is unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_lines(
    columns: Iterable[str], rows: Iterable[Mapping[str, Any]], *, none_as: str | None = None
) -> Iterator[str]:
    """The header and then ``rows`` as CSV text, a line at a time (streamed: constant memory), every cell passed
    through ``spreadsheet_safe``. Columns a row lacks are empty; keys not in ``columns`` are left out. ``none_as``:
    what None becomes (csv writes "" by default)."""
    names = list(columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_safe(name) for name in names])
    yield buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([spreadsheet_safe(row.get(name)) for name in names])
        yield buffer.getvalue()


__all__ = ["FORMULA_STARTS", "csv_lines", "spreadsheet_safe"]
