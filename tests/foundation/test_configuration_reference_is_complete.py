"""The configuration reference (docs/configuration.md) names every variable the code reads, nothing else, with the
code's defaults; .env.example lists every one an operator may set."""

from __future__ import annotations

import re

from tests.settings_reference import documented_defaults, documented_settings, settings_read


def _as_written(default: object) -> str:
    """A literal default as the reference writes it: on/off for switches, digits for numbers."""
    if isinstance(default, bool):
        return "on" if default else "off"
    return str(default)


def test_the_reader_finds_the_settings_it_should():
    read = settings_read()
    # Each way of reading: env_int, env_bool, env_list, os.environ.get, config/env.py's environ.get, gunicorn's _int.
    assert {"JOB_STALE_SECONDS", "DEBUG", "ALLOWED_HOSTS", "LLM_MODEL", "DATABASE_URL", "WEB_THREADS"} <= set(read)
    assert read["JOB_STALE_SECONDS"].default == 60


def test_every_variable_the_code_reads_is_documented():
    read = settings_read()
    undocumented = sorted(set(read) - documented_settings())
    # Rows to paste into the reference, with the default the code gives (say what it means).
    rows = "\n".join(f"| `{n}` | {_as_written(read[n].default)} | (read in {read[n].where}) |" for n in undocumented)
    assert not undocumented, f"read by the code, missing from docs/configuration.md:\n{rows}"


def test_every_documented_variable_is_read_by_the_code():
    unread = sorted(documented_settings() - set(settings_read()))
    assert not unread, f"in docs/configuration.md, read by nothing: {unread}"


def test_literal_defaults_match_the_code():
    documented = documented_defaults()
    wrong = {}
    for name, read in settings_read().items():
        if isinstance(read.default, bool | int) and name in documented:
            first_word = re.split(r"[ (]", documented[name].strip("`"), maxsplit=1)[0]
            if first_word != _as_written(read.default):
                wrong[name] = (documented[name], read.default)
    assert not wrong, f"documented default differs from the code's: {wrong}"
