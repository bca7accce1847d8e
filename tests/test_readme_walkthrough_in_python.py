"""The README's Python-client walk-through, run as typed against a live server of its own.

A module of its own, so it starts from an empty database as a reader would. It runs twice: the second run makes
a second project whose labels name the same annotators, each project's own imported identities.
"""

from __future__ import annotations

from tests.test_readme_walkthrough import EXPECTED_DPO, _dpo, _run, checkout, lead, pytestmark, readme_blocks

__all__ = ["checkout", "lead", "pytestmark"]


def test_the_python_walkthrough_runs_as_typed(penumbra_server, lead, checkout):
    blocks = readme_blocks()
    _run(["bash", "-euo", "pipefail", "-c", blocks["files"]], checkout, penumbra_server.env, penumbra_server)
    (checkout / "script.py").write_text(blocks["python"])
    token = _run(
        [".venv/bin/python", "manage.py", "api_token", "lead"], checkout, penumbra_server.env, penumbra_server
    ).strip()
    env = {**penumbra_server.env, "PENUMBRA_URL": penumbra_server.url, "PENUMBRA_TOKEN": token}

    for _ in range(2):
        output = _run([".venv/bin/python", "script.py"], checkout, env, penumbra_server)

        assert "num_rows: 2" in output  # the Dataset's summary
        assert _dpo(checkout / "dpo-python.jsonl") == EXPECTED_DPO
