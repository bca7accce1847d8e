"""manage.py export_project writes the same lines as the API, with a progress bar, to --output."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from aggregation.exports.stream import ExportOptions, export_lines


def test_command_writes_the_export(labelled_project, tmp_path, capsys):
    output = tmp_path / "soft.jsonl"
    call_command("export_project", labelled_project.slug, "--format", "soft", "--output", str(output))

    expected = "".join(export_lines(project=labelled_project, options=ExportOptions(format="soft")))
    assert output.read_text() == expected
    assert all("p_a_over_b" in json.loads(line) for line in output.read_text().splitlines())
    assert "lines written" in capsys.readouterr().err


def test_command_refuses_a_bad_filter(labelled_project, tmp_path):
    with pytest.raises(CommandError, match="max_hesitation"):
        call_command("export_project", labelled_project.slug, "--max-hesitation", "3", "--output", str(tmp_path / "x"))
