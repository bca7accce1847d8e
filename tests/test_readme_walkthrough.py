"""The API guide's walk-through, run as typed: its marked blocks (curl and the Python client) against a live server.

Each block follows a ``<!-- docs-test: NAME -->`` line in docs/guides/api.md (the README links there). They run in a
scratch folder where ``.venv`` and ``manage.py`` are the repository's (as in a checkout), with the demo's address
replaced by the live server's.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.factories import UserFactory, may_create_projects
from tests.processes import ROOT

# The xdist group keeps the module on one worker under `make test`, so it starts one server.
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db,
    pytest.mark.xdist_group("readme-live-server"),
]
DEMO_URL = "http://127.0.0.1:8000"
WALKTHROUGH = ROOT / "docs" / "guides" / "api.md"
BLOCK = re.compile(r"<!-- docs-test: (?P<name>[\w-]+) -->\s*```(?P<lang>\w+)\n(?P<code>.*?)```", re.DOTALL)
EXPECTED_DPO = {
    ("Why does ice float on water?", "It is less dense than liquid water.", "It is cold."),
    ("Name a prime number between 20 and 30.", "23", "21"),
}


def readme_blocks() -> dict[str, str]:
    return {m["name"]: m["code"] for m in BLOCK.finditer(WALKTHROUGH.read_text())}


@pytest.fixture(scope="module")
def lead(penumbra_server, django_db_blocker):
    with django_db_blocker.unblock():
        # As the demo's lead: allowed to create projects (PROJECT_CREATORS is "staff" by default).
        may_create_projects(UserFactory(username="lead"))


@pytest.fixture
def checkout(tmp_path) -> Path:
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "manage.py").symlink_to(ROOT / "manage.py")
    return tmp_path


def _run(command: list[str], folder: Path, env: dict[str, str], server) -> str:
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.logs()}"
    return done.stdout


def _dpo(path: Path) -> set[tuple[str, str, str]]:
    return {(r["prompt"], r["chosen"], r["rejected"]) for r in map(json.loads, path.read_text().splitlines())}


def test_the_api_guide_marks_the_blocks_it_runs():
    assert set(readme_blocks()) == {"files", "curl", "python"}
    assert "python manage.py" not in readme_blocks()["curl"].replace(".venv/bin/python manage.py", "")


def test_the_curl_walkthrough_runs_as_typed(penumbra_server, lead, checkout):
    blocks = readme_blocks()
    script = blocks["files"] + blocks["curl"].replace(DEMO_URL, penumbra_server.url)

    # Twice, as a reader trying it again would: a second project with the same annotator names, and in each the
    # same labels imported twice (the second time, nothing changes).
    for _ in range(2):
        output = _run(["bash", "-euo", "pipefail", "-c", script], checkout, penumbra_server.env, penumbra_server)

        assert '"status":"done"' in output
        assert '"status":"failed"' not in output
        assert '"unchanged":4' in output
        assert _dpo(checkout / "dpo.jsonl") == EXPECTED_DPO
