"""The backup and restore commands of docs/guides/operations.md work: ``pg_dump -Fc`` of a database holding a
labelled project, restored with ``pg_restore`` into a fresh database, gives back every table row for row (the
digest of tests/snapshots.py).

Real pg_dump and pg_restore against the test PostgreSQL; the data is committed first (a transactional test), since a
dump sees only committed rows.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.services_plugin import CI
from tests.snapshots import changes, database_digest

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _libpq_environment(settings: dict) -> dict[str, str]:
    env = {"PGHOST": settings["HOST"] or "127.0.0.1", "PGPORT": str(settings["PORT"] or 5432)}
    env["PGUSER"] = settings["USER"] or "postgres"
    if settings["PASSWORD"]:
        env["PGPASSWORD"] = settings["PASSWORD"]
    return env


def _connect_arguments(settings: dict) -> dict[str, str]:
    env = _libpq_environment(settings)
    arguments = {"host": env["PGHOST"], "port": env["PGPORT"], "user": env["PGUSER"]}
    if "PGPASSWORD" in env:
        arguments["password"] = env["PGPASSWORD"]
    return arguments


def test_a_dump_restores_into_a_fresh_database_unchanged(tmp_path: Path, project, annotator, annotator2):
    from tests.exports.builders import build_labelled_project

    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        missing = "service missing: pg_dump and pg_restore (PostgreSQL client programs) are not installed"
        if CI:  # under CI a missing service fails the run, as for the services the plugin looks for
            pytest.fail(missing)
        pytest.skip(missing)
    build_labelled_project(project, [annotator, annotator2])
    source = dict(connection.settings_dict)
    env = {**_libpq_environment(source), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    dump = tmp_path / "penumbra.dump"
    restored_name = f"{source['NAME']}_restored"

    # The guide's commands, with the stack's names replaced by the test database's.
    subprocess.run(["pg_dump", "-Fc", "-d", source["NAME"], "-f", str(dump)], env=env, check=True, timeout=120)
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{restored_name}"')
        cursor.execute(f'CREATE DATABASE "{restored_name}"')
    restored = None
    try:
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "-d", restored_name, str(dump)],
            env=env,
            check=True,
            timeout=120,
        )
        # A plain libpq connection: Django's test isolation allows no second database alias here.
        restored = psycopg.connect(dbname=restored_name, **_connect_arguments(source))
        original = database_digest()

        copy = database_digest(restored)

        assert original["projects_project"][0] >= 1  # the project and its labels are in what was compared
        assert original["annotation_annotation"][0] >= 2
        assert not changes(original, copy), changes(original, copy)
    finally:
        if restored is not None:
            restored.close()
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{restored_name}"')
