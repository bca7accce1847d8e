"""A clone is enough: the design the code and the README point to is in the repository, and no tracked file reads
data or documents from a folder beside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "shared/" + "data", "/" + "work/"]))


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    paths = [ROOT / name for name in listed.splitlines() if not name.startswith("static/vendor/")]
    return [path for path in paths if path.suffix in {".py", ".md", ".toml", ".html", ".txt", ".yml", ""}]


def test_the_design_is_in_the_repository_and_every_mention_points_there():
    assert (ROOT / "docs" / "DESIGN.md").is_file()
    loose = []
    for path in _tracked_text_files():
        if not path.is_file() or path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for match in re.finditer(r"(\S*)DESIGN\.md", line):
                # The docs site's navigation names its pages relative to docs/.
                if not match.group(1).endswith("docs/") and path.parent.name != "docs" and path.name != "mkdocs.yml":
                    loose.append(f"{path.relative_to(ROOT)}:{number}")
    assert loose == []


def test_no_tracked_file_reads_from_beside_the_repository():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _tracked_text_files()
        if path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []
