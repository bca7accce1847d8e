"""The converters are pure: reading another tool's file needs no Django, so they can run anywhere (a notebook)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_format_modules_import_no_django():
    code = (
        "import sys, io, projects.formats as f; "
        "rows = f.convert_items('potato', open('tests/formats/data/potato_data.jsonl', 'rb')).rows; "
        "print(len(rows), any(m.split('.')[0] in ('django', 'rest_framework') for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["3", "False"]
