"""Every queryset the REST API answers with comes from a selector that applies the access rule: the API modules
build none themselves (no ``Model.objects`` in them), so a new endpoint cannot forget the rule inline.

The API modules are found, not listed: every module of the apps that imports Django REST framework (or is named
like an API module), so a new one is checked the day it is written."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("projects", "annotation", "aggregation", "suggestions")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports_rest_framework(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(name == "rest_framework" or name.startswith("rest_framework.") for name in names):
            return True
    return False


def api_modules() -> list[str]:
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or "management" in parts:
                continue
            named_api = path.stem == "api" or path.stem.endswith("_api")
            if named_api or _imports_rest_framework(_tree(path)):
                found.append(path.relative_to(ROOT).as_posix())
    return found


def _manager_uses(source: str) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr in {"objects", "_default_manager"}
    ]


@pytest.mark.parametrize("module", api_modules())
def test_the_api_module_reads_through_selectors(module):
    lines = _manager_uses((ROOT / module).read_text())
    assert lines == [], f"{module} builds querysets itself on lines {lines}"


def test_the_search_finds_every_api_module():
    found = set(api_modules())
    assert {
        "projects/api.py",
        "annotation/api.py",
        "annotation/crowd/api.py",
        "annotation/method_study/api.py",
        "aggregation/api.py",
        "aggregation/designs/views.py",
        "suggestions/api.py",
    } <= found
    assert not any(module.endswith(("selectors.py", "services.py", "models.py")) for module in found), found


def test_the_check_sees_an_inline_queryset():
    assert _manager_uses("rows = Job.objects.filter(project=project)\n") == [1]
