"""Hindi, Arabic, Spanish and Simplified Chinese translate every string an annotator or a study participant can
see: no entry of theirs is untranslated, fuzzy or a copy of the English, its placeholders are the msgid's, the
compiled .mo files say what the .po files say, and the sources hold no marked string the catalogs lack
(makemessages run on a copy of the sources, so a string marked later and never translated fails here)."""

from __future__ import annotations

import gettext
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings

from tests.languages.catalogs import (
    DOMAINS,
    LOCALE,
    TRANSLATED,
    catalog,
    for_annotators_and_participants,
)

CASES = [(language, domain) for language in TRANSLATED for domain in DOMAINS]
_PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%|<[^>]+>")
#: Entries that read the same in a translation on purpose (symbols and product names).
SAME_ON_PURPOSE = {"LLM"}


def _forms(entry: polib.POEntry) -> list[str]:
    return list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]


@pytest.mark.parametrize(("language", "domain"), CASES)
def test_no_annotator_or_participant_entry_is_missing_fuzzy_or_english(language, domain):
    entries = [e for e in catalog(language, domain) if not e.obsolete and for_annotators_and_participants(e)]
    assert len(entries) > (150 if domain == "django" else 5), "the catalog lost its entries"
    problems = []
    for entry in entries:
        forms = _forms(entry)
        if "fuzzy" in entry.flags:
            problems.append(f"fuzzy: {entry.msgid!r}")
        elif not all(form.strip() for form in forms):
            problems.append(f"untranslated: {entry.msgid!r}")
        elif entry.msgid not in SAME_ON_PURPOSE and forms[0] == entry.msgid and re.search("[A-Za-z]{3}", entry.msgid):
            problems.append(f"left in English: {entry.msgid!r}")
        else:
            expected = sorted(set(_PLACEHOLDER.findall(entry.msgid)) | set(_PLACEHOLDER.findall(entry.msgid_plural)))
            for form in forms:
                found = sorted(set(_PLACEHOLDER.findall(form)))
                if found != expected:
                    problems.append(f"placeholders or tags {found} instead of {expected}: {entry.msgid!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("language", "domain"), CASES)
def test_the_compiled_catalog_says_what_the_po_file_says(language, domain):
    folder = LOCALE / language / "LC_MESSAGES"
    with open(folder / f"{domain}.mo", "rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = []
    table = compiled._catalog  # type: ignore[attr-defined]  # gettext keeps no public view of the whole catalog
    for entry in catalog(language, domain):
        if entry.obsolete or "fuzzy" in entry.flags:
            continue
        key = f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid
        if entry.msgid_plural:
            if any(table.get((key, int(n))) != form for n, form in entry.msgstr_plural.items()):
                stale.append(entry.msgid)
        elif table.get(key) != entry.msgstr:
            stale.append(entry.msgid)
    assert not stale, f"run `manage.py compilemessages`: {len(stale)} entries differ, e.g. {stale[:3]}"


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs GNU gettext (.ci/run installs it)")
def test_every_marked_string_of_the_sources_is_in_the_catalogs(tmp_path):
    """makemessages on a copy of the sources (never on the shipped locale folder), then every msgid it finds must
    already be in the shipped Spanish catalog: a string marked and never added to the catalogs fails here."""
    base = Path(settings.BASE_DIR)
    copy = tmp_path / "src"
    for folder in ("annotation", "projects", "aggregation", "suggestions", "config", "templates", "static"):
        shutil.copytree(base / folder, copy / folder, ignore=shutil.ignore_patterns("vendor", "__pycache__"))
    shutil.copy(base / "manage.py", copy / "manage.py")
    (copy / "locale").mkdir()
    for domain in DOMAINS:
        subprocess.run(
            [sys.executable, "manage.py", "makemessages", "-d", domain, "-l", "es", "--no-obsolete"],
            cwd=copy,
            check=True,
            capture_output=True,
        )
        found = polib.pofile(str(copy / "locale" / "es" / "LC_MESSAGES" / f"{domain}.po"))
        shipped = {(e.msgctxt, e.msgid) for e in catalog("es", domain) if not e.obsolete}
        missing = [e.msgid for e in found if (e.msgctxt, e.msgid) not in shipped]
        assert len(found) > 5
        assert not missing, f"{domain}: run makemessages and translate {missing[:5]}"
