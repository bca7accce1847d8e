"""docs/ARCHITECTURE.md names only what exists: every path it cites (from the repository root, or from an app's
folder as the room lists write them), every dotted name (imported and looked up), and every "(N modules)" count.

When a room moves, this test lists each stale name at once; fix the document, not the test."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "ARCHITECTURE.md"
APPS = ("config", "projects", "annotation", "aggregation", "suggestions", "client", "tests")
#: `aggregation/exports/stream.py`, `maths/`, `selectors.py`: a path or a file name, no placeholder such as <tool>.
PATH = re.compile(r"[\w.-]+(/[\w.-]+)*/?")
FILE_SUFFIXES = (".py", ".md", ".js", ".html", ".toml", ".yml", ".txt")
#: `projects.services.FIGURE_SETTINGS`, `annotation.selectors.suggestion_visible_for()`: rooted at an app.
DOTTED = re.compile(r"(config|projects|annotation|aggregation|suggestions)(\.\w+)+")
COUNT = re.compile(r"`(\w+)/`: one room \((\d+) modules\)")


def cited() -> list[str]:
    return re.findall(r"`([^`\n]+)`", DOCUMENT.read_text())


def _is_path(token: str) -> bool:
    return bool(PATH.fullmatch(token)) and (token.endswith("/") or token.endswith(FILE_SUFFIXES))


def _path_exists(token: str) -> bool:
    if (ROOT / token).exists():
        return True
    if "/" not in token.rstrip("/"):  # a bare name from a room list: some app has it
        return any(True for app in APPS for _ in (ROOT / app).rglob(token.rstrip("/")))
    return any((ROOT / app / token).exists() for app in APPS)


def _name_exists(token: str) -> bool:
    parts = token.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_the_document_cites_paths_and_names_this_test_checks():
    tokens = cited()
    assert sum(map(_is_path, tokens)) > 50
    assert sum(bool(DOTTED.fullmatch(t.removesuffix("()"))) for t in tokens) > 5


def test_every_cited_path_exists():
    missing = sorted({token for token in cited() if _is_path(token) and not _path_exists(token)})
    assert not missing, f"docs/ARCHITECTURE.md cites paths that do not exist: {missing}"


def test_every_cited_dotted_name_exists():
    names = {token.removesuffix("()") for token in cited()}
    missing = sorted(name for name in names if DOTTED.fullmatch(name) and not _name_exists(name))
    assert not missing, f"docs/ARCHITECTURE.md cites names that do not exist: {missing}"


def test_module_counts_are_right():
    for room, stated in COUNT.findall(DOCUMENT.read_text()):
        modules = [path for path in (ROOT / room).glob("*.py") if path.name != "__init__.py"]
        assert len(modules) == int(stated), f"`{room}/` has {len(modules)} modules, the document says {stated}"
