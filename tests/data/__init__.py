"""Real preference data the tests read, kept in the repository so that every clone runs them (README.md here says
what each file is, where it comes from and its licence)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent


def comparisons(name: str) -> list[dict[str, Any]]:
    """The rows of ``summarize_from_feedback/<name>.jsonl.gz``: one comparison a line, as published."""
    with gzip.open(FOLDER / "summarize_from_feedback" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
