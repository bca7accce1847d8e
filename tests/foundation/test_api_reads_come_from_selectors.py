"""Every queryset the REST API answers with comes from a selector that applies the access rule: the API modules
build none themselves (no ``Model.objects`` in them), so a new endpoint cannot forget the rule inline."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_MODULES = ["annotation/api.py", "aggregation/api.py", "projects/api.py", "suggestions/api.py"]


def _manager_uses(source: str) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr in {"objects", "_default_manager"}
    ]


@pytest.mark.parametrize("module", API_MODULES)
def test_the_api_module_reads_through_selectors(module):
    lines = _manager_uses((ROOT / module).read_text())
    assert lines == [], f"{module} builds querysets itself on lines {lines}"


def test_the_check_sees_an_inline_queryset():
    assert _manager_uses("rows = Job.objects.filter(project=project)\n") == [1]
