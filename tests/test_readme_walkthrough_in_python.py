"""The API guide's walk-throughs (docs/guides/api.md) one after the other on one server, as a reader would run
them: the curl walk-through, then the Python client's twice (each run makes its own project and imports the same
labels.jsonl: imported annotator names are each project's own, so alice and bob are never refused)."""

from __future__ import annotations

from tests.test_readme_walkthrough import (
    DEMO_URL,
    EXPECTED_DPO,
    _dpo,
    _run,
    checkout,
    lead,
    pytestmark,
    readme_blocks,
)

__all__ = ["checkout", "lead", "pytestmark"]


def test_the_curl_then_the_python_walkthrough_run_as_typed_on_one_server(penumbra_server, lead, checkout):
    blocks = readme_blocks()
    curl = blocks["files"] + blocks["curl"].replace(DEMO_URL, penumbra_server.url)
    _run(["bash", "-euo", "pipefail", "-c", curl], checkout, penumbra_server.env, penumbra_server)
    assert _dpo(checkout / "dpo.jsonl") == EXPECTED_DPO

    (checkout / "script.py").write_text(blocks["python"])
    token = _run(
        [".venv/bin/python", "manage.py", "api_token", "lead"], checkout, penumbra_server.env, penumbra_server
    ).strip()
    env = {**penumbra_server.env, "PENUMBRA_URL": penumbra_server.url, "PENUMBRA_TOKEN": token}

    for _ in range(2):
        output = _run([".venv/bin/python", "script.py"], checkout, env, penumbra_server)

        assert "num_rows: 2" in output  # the Dataset's summary
        assert _dpo(checkout / "dpo-python.jsonl") == EXPECTED_DPO
