"""What the code reads from the environment and what docs/configuration.md says about it, for the tests that hold
the two (and .env.example, and docker-compose.yml) together."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "configuration.md"
#: The modules that read settings from the environment: Django's settings, their helpers, gunicorn's settings.
READERS = ("config/settings.py", "config/env.py", "config/gunicorn.py")
#: The helpers whose first argument is a variable's name (config/env.py, config/gunicorn.py) and second its default.
HELPERS = {"env_bool", "env_int", "env_list", "_int"}
NAME = re.compile(r"[A-Z][A-Z0-9_]+")
TESTS_ONLY = "## For the tests only"
ENVIRON = {"os.environ", "environ"}


@dataclass(frozen=True)
class Read:
    name: str
    where: str
    default: object  # the literal default, or None when the code computes it


def _read_at(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in HELPERS
    # os.environ.get(...) and environ.get(...) (the helpers' own mapping argument)
    return isinstance(func, ast.Attribute) and func.attr == "get" and ast.unparse(func.value) in ENVIRON


def settings_read() -> dict[str, Read]:
    """Every variable a settings module reads, with its literal default where there is one."""
    found: dict[str, Read] = {}
    for relative in READERS:
        for node in ast.walk(ast.parse((ROOT / relative).read_text())):
            if not (isinstance(node, ast.Call) and _read_at(node) and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and NAME.fullmatch(first.value):
                second = node.args[1] if len(node.args) > 1 else None
                default = second.value if isinstance(second, ast.Constant) else None
                found.setdefault(first.value, Read(first.value, relative, default))
    return found


def documented_rows(*, tests_only: bool = True) -> list[tuple[list[str], str]]:
    """The reference's table rows as (variable names, default cell); without the tests-only section if asked."""
    text = REFERENCE.read_text()
    if not tests_only:
        text = text.split(TESTS_ONLY, 1)[0]
    rows = []
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows.append((re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0]), cells[1]))
    return rows


def documented_settings(*, tests_only: bool = True) -> set[str]:
    return {name for names, _ in documented_rows(tests_only=tests_only) for name in names}


def documented_defaults() -> dict[str, str]:
    """Each variable's own part of its row's default cell: "5, 50, 900" for three names gives one part each."""
    defaults = {}
    for names, cell in documented_rows():
        parts = [part.strip() for part in cell.split(", ")] if len(names) > 1 else [cell]
        for name, part in zip(names, parts, strict=False):
            defaults[name] = part
    return defaults
