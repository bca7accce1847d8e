"""MkDocs hooks: the API reference page renders the OpenAPI schema of this checkout, written before every build.

The schema goes to var/docs/ (ignored, outside docs/), so `mkdocs serve` does not rebuild in a loop on its own output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "var" / "docs" / "openapi.json"


def on_pre_build(config: Any) -> None:
    SCHEMA.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "manage.py", "spectacular", "--format", "openapi-json", "--file", str(SCHEMA)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"manage.py spectacular failed:\n{done.stdout}\n{done.stderr}")
