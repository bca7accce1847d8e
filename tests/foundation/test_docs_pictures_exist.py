"""The documentation's pictures: every one a page shows is there, every one is made by a browser test that drives
the real pages (so none goes stale), and every guide has at least one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
SCREENSHOTS_TEST = ROOT / "tests" / "browser" / "test_docs_screenshots.py"
#: Guides with nothing on a page to show, and why.
TEXT_ONLY = {
    "operations.md": "commands and a server's settings: nothing of it is on a page",
}
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def pictures(page: Path) -> list[Path]:
    return [(page.parent / target).resolve() for target in IMAGE.findall(page.read_text())]


def test_every_picture_a_page_shows_exists():
    missing = [f"{page.relative_to(ROOT)}: {p}" for page in PAGES for p in pictures(page) if not p.is_file()]
    assert not missing, missing


def _made_by_tests() -> list[re.Pattern[str]]:
    """The names the browser tests write into docs/img: the screenshot test names each file (``"name"``), the
    tests of a feature write theirs as ``DOCS_IMG / "name.png"`` or an f-string (``f"chat-{width}.png"``)."""
    made = [re.compile(re.escape(name)) for name in re.findall(r'"([a-z0-9-]+)"', SCREENSHOTS_TEST.read_text())]
    for module in (ROOT / "tests").rglob("*.py"):
        text = module.read_text()
        if "docs" not in text or "img" not in text:
            continue
        for written in re.findall(r'f?"([^"{}]*(?:\{[^}]*\}[^"{}]*)*)\.png"', text):
            made.append(re.compile(".+".join(re.escape(part) for part in re.split(r"\{[^}]*\}", written))))
    return made


def test_every_picture_is_made_by_a_browser_test():
    made = _made_by_tests()
    shown = {p.stem for page in PAGES for p in pictures(page)}
    assert shown, "no page shows a picture"
    unmade = sorted(name for name in shown if not any(pattern.fullmatch(name) for pattern in made))
    assert not unmade, f"pictures no browser test makes: {unmade}"


def test_every_guide_has_a_picture():
    assert GUIDES
    without = [g.name for g in GUIDES if not pictures(g) and g.name not in TEXT_ONLY]
    assert not without, f"guides without a picture (add one to {SCREENSHOTS_TEST.name}, or say why in TEXT_ONLY)"


def test_the_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[2:6] == [
        "```sh",
        "make demo    # virtualenv, install, migrate, seed the demo project, serve it at http://127.0.0.1:8000/",
        "make test    # lint (ruff), types (mypy), migrations check, the whole test suite",
        "```",
    ]
    assert len(lines) <= 200
