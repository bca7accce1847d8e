"""`manage.py check --deploy` has nothing to say with the environment docker-compose.yml gives the app."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose_environment() -> dict[str, str]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment: dict[str, str] = {}
    for name, value in compose["services"]["web"]["environment"].items():
        # Resolve ${VAR:-default} and ${VAR:?message} the way compose does with nothing set; a required one inside a
        # longer value (a password in DATABASE_URL) gets a stand-in, as the operator's .env would give it one.
        match = re.fullmatch(r"\$\{(\w+):([-?])(.*)\}", str(value))
        if match and match.group(2) == "-":
            value = match.group(3)
        elif match:
            value = None
        else:
            value = re.sub(r"\$\{\w+:\?[^}]*\}", "stand-in-password", str(value))
        if value is not None:
            environment[name] = str(value)
    return environment


def test_check_deploy_reports_nothing_with_the_compose_environment(tmp_path):
    environment = {key: value for key, value in os.environ.items() if key in {"PATH", "HOME", "LANG"}}
    environment.update(_compose_environment())
    environment.update(
        # The compose file demands these from the operator; a real deployment sets them like this.
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="penumbra.example.org",
        CSRF_TRUSTED_ORIGINS="https://penumbra.example.org",
        PENUMBRA_DATA_DIR=str(tmp_path),
        STATIC_ROOT=str(tmp_path / "static"),
    )
    assert environment["DATABASE_URL"].startswith("postgres://")

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_same_check_warns_without_the_production_defaults(tmp_path):
    """The check above can fail: with HTTPS switched off the same command names the missing settings."""
    environment = {key: value for key, value in os.environ.items() if key in {"PATH", "HOME", "LANG"}}
    environment.update(_compose_environment())
    environment.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        PENUMBRA_HTTPS="0",
        PENUMBRA_DATA_DIR=str(tmp_path),
        STATIC_ROOT=str(tmp_path / "static"),
    )
    environment.pop("SECURE_HSTS_SECONDS", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    output = result.stdout + result.stderr
    assert result.returncode != 0
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in output
