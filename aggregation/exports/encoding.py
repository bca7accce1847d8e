"""What every export generator shares: one line's encoding, the rounding of figures, a page's ``IN`` filter."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.db.models import QuerySet

# One encoder for every line: json.dumps with options builds a new encoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def line(row: dict[str, Any]) -> str:
    return _ENCODER.encode(row) + "\n"


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def among(rows: QuerySet[Any], column: str, ids: list[int]) -> QuerySet[Any]:
    """``column IN ids`` for a page of ids. On PostgreSQL as ``= ANY(array)``: one parameter instead of thousands,
    which Django and the driver would otherwise process one by one on every page (a third of the export's time)."""
    if connection.vendor != "postgresql":
        return rows.filter(**{f"{column}__in": ids})
    table = connection.ops.quote_name(rows.model._meta.db_table)
    return rows.extra(where=[f"{table}.{connection.ops.quote_name(column)} = ANY(%s)"], params=[ids])
