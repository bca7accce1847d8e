"""The shipped catalogs, read with polib: which entries the annotator's and the participant's pages use, and a
test-only pseudo-locale built from them (every msgstr wraps its msgid, so an unmarked string stands out)."""

from __future__ import annotations

from pathlib import Path

import polib
from django.conf import settings

LOCALE = Path(settings.BASE_DIR) / "locale"
#: The shipped languages other than English (the msgids), as their locale folders are named.
TRANSLATED = ("hi", "ar", "es", "zh_Hans")
DOMAINS = ("django", "djangojs")
#: Where the annotator's and the participant's strings come from: every one of them must be translated.
ANNOTATOR_AND_PARTICIPANT_SOURCES = (
    "templates/base.html",
    "templates/503.html",
    "templates/annotation/",
    "templates/study/consent.html",
    "templates/study/end.html",
    "templates/study/return.html",
    "templates/study/refused.html",
    "templates/registration/",
    "templates/projects/",
    "annotation/checks.py",
    "annotation/ifs_presets.py",
    "annotation/page/selectors.py",
    "annotation/page/views.py",
    "annotation/crowd/views.py",
    "annotation/crowd/services.py",
    "annotation/crowd/limits.py",
    "projects/templatetags/numbers.py",
    "projects/models.py",
    "static/js/annotate.js",
    "static/js/ifs_input.js",
    "static/js/study.js",
)
PSEUDO = "qps"
OPEN, CLOSE = "⟦", "⟧"


def catalog(language: str, domain: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / language / "LC_MESSAGES" / f"{domain}.po"))


def for_annotators_and_participants(entry: polib.POEntry) -> bool:
    return any(path.startswith(ANNOTATOR_AND_PARTICIPANT_SOURCES) for path, _ in entry.occurrences)


def pseudo_locale_write(root: Path) -> None:
    """``root/qps/LC_MESSAGES/<domain>.mo``: every entry of the shipped catalogs, its msgstr ⟦msgid⟧."""
    folder = root / PSEUDO / "LC_MESSAGES"
    folder.mkdir(parents=True)
    for domain in DOMAINS:
        source = catalog("es", domain)
        pseudo = polib.POFile()
        pseudo.metadata = {
            "Content-Type": "text/plain; charset=UTF-8",
            "Language": PSEUDO,
            "Plural-Forms": "nplurals=2; plural=(n != 1);",
        }
        for entry in source:
            if entry.obsolete:
                continue
            wrapped = polib.POEntry(msgctxt=entry.msgctxt, msgid=entry.msgid, msgid_plural=entry.msgid_plural)
            if entry.msgid_plural:
                wrapped.msgstr_plural = {0: OPEN + entry.msgid + CLOSE, 1: OPEN + entry.msgid_plural + CLOSE}
            else:
                wrapped.msgstr = OPEN + entry.msgid + CLOSE
            pseudo.append(wrapped)
        pseudo.save_as_mofile(str(folder / f"{domain}.mo"))
