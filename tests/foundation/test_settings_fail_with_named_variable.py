"""A malformed setting stops the start with a message naming the variable and what is expected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.env import SettingsError, database_url, env_bool, env_int, redis_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("environ", "reader", "fragment"),
    [
        ({"DATABASE_URL": "mysql://x/y"}, database_url, "DATABASE_URL='mysql://x/y': expected postgres://"),
        ({"DATABASE_URL": "postgres://host:5432/"}, database_url, "database name is missing"),
        ({"REDIS_URL": "http://localhost"}, redis_url, "REDIS_URL='http://localhost': expected redis://"),
    ],
)
def test_url_errors_name_the_variable(environ, reader, fragment):
    with pytest.raises(SettingsError, match=fragment.replace("?", r"\?")):
        reader(environ)


def test_numbers_and_flags_are_checked():
    with pytest.raises(SettingsError, match="DEBUG='maybe'"):
        env_bool("DEBUG", False, {"DEBUG": "maybe"})
    with pytest.raises(SettingsError, match="at least 10"):
        env_int("PENUMBRA_CLAIM_SECONDS", 900, {"PENUMBRA_CLAIM_SECONDS": "3"}, minimum=10)
    assert env_int("X", 7, {}) == 7
    assert env_bool("X", True, {"X": "off"}) is False


def test_no_environment_means_embedded_defaults():
    assert database_url({}) is None
    assert redis_url({}) is None
    assert database_url({"DATABASE_URL": "postgres://u@h:5432/db"}) == "postgres://u@h:5432/db"


def test_django_refuses_to_start_with_a_bad_database_url(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DATABASE_URL="oracle://nowhere/db", PENUMBRA_DATA_DIR=str(tmp_path))
    completed = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode != 0
    assert "DATABASE_URL='oracle://nowhere/db': expected postgres://" in completed.stderr
