"""The import contracts in pyproject.toml (the floors of docs/ARCHITECTURE.md) hold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_lint_imports_keeps_every_contract() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=REPOSITORY, capture_output=True, text=True, check=False, timeout=120
    )

    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout
