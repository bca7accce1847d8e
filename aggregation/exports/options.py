"""What an export may be asked for (format, filters, pairs, ties) and the check of a request, read by the export
itself (aggregation.exports.stream, which re-exports these names), the API serializer and the export command."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from aggregation.models import Provenance

FORMATS = ("dpo", "soft", "ifs", "annotations", "rankings", "kto")
PAIRS = ("all", "best_worst")
TIES = ("exclude", "mark")
#: What ``ties`` means when not given: a DPO row says "chosen is better", which a tie is not.
DEFAULT_TIES = {
    "dpo": "exclude",
    "soft": "mark",
    "ifs": "mark",
    "annotations": "mark",
    "rankings": "mark",
    "kto": "mark",
}
DEFAULT_CHUNK_SIZE = 2000
OVERALL = "overall"


@dataclass(frozen=True)
class ExportOptions:
    format: str = "dpo"
    min_annotators: int | None = None
    max_hesitation: float | None = None
    min_agreement: float | None = None
    min_margin: float | None = None
    provenance: str | None = None
    pairs: str = "best_worst"
    ties: str | None = None  # None: DEFAULT_TIES of the format
    #: Item metadata keys written as string columns ``metadata_<key>`` (dpo, soft and ifs).
    metadata: tuple[str, ...] = ()

    @property
    def ties_excluded(self) -> bool:
        return (self.ties or DEFAULT_TIES.get(self.format, "mark")) == "exclude"


MAX_MIN_ANNOTATORS = 1_000_000
MAX_METADATA_KEYS = 20
#: A metadata key becomes part of a column name: letters, digits and ``_`` keep it a plain identifier in every tool.
METADATA_KEY = re.compile(r"[A-Za-z0-9_]{1,64}")


def metadata_keys_problem(keys: tuple[str, ...]) -> str | None:
    if len(keys) > MAX_METADATA_KEYS:
        return f"At most {MAX_METADATA_KEYS} metadata keys."
    for key in keys:
        if not isinstance(key, str) or not METADATA_KEY.fullmatch(key):
            return f"A metadata key is 1 to 64 letters, digits or underscores (got {key!r})."
    if len(set(keys)) != len(keys):
        return "Each metadata key once."
    return None


def check_export_options(options: ExportOptions) -> None:
    """Raise ValidationError naming each bad option; nothing is read."""
    errors: dict[str, str] = {}
    if options.format not in FORMATS:
        errors["format"] = f"Expected one of {', '.join(FORMATS)}."
    if options.pairs not in PAIRS:
        errors["pairs"] = f"Expected one of {', '.join(PAIRS)}."
    if options.ties is not None and options.ties not in TIES:
        errors["ties"] = f"Expected one of {', '.join(TIES)}."
    if options.provenance is not None and options.provenance not in Provenance.values:
        errors["provenance"] = f"Expected one of {', '.join(Provenance.values)}."
    if options.min_annotators is not None and not 0 <= options.min_annotators <= MAX_MIN_ANNOTATORS:
        # Above the database's integer range the filter would fail instead of matching nothing.
        errors["min_annotators"] = f"Expected a whole number from 0 to {MAX_MIN_ANNOTATORS}."
    if options.max_hesitation is not None and not 0 <= options.max_hesitation <= 1:
        errors["max_hesitation"] = "Expected a number from 0 to 1."
    if options.min_agreement is not None and not 0 <= options.min_agreement <= 1:
        errors["min_agreement"] = "Expected a number from 0 to 1."
    if options.min_margin is not None and not 0 <= options.min_margin <= 2:
        errors["min_margin"] = "Expected a number from 0 to 2."
    metadata_problem = metadata_keys_problem(options.metadata)
    if metadata_problem is not None:
        errors["metadata"] = metadata_problem
    if errors:
        raise ValidationError(errors)
