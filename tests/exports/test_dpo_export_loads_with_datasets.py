"""The dpo export is what TRL reads: datasets.load_dataset("json") loads it offline with the expected columns."""

from __future__ import annotations

import os

import pytest

from aggregation.exports.stream import ExportOptions, export_lines

DPO_COLUMNS = {
    "prompt": "string",
    "chosen": "string",
    "rejected": "string",
    "p_chosen": "float64",
    "margin": "float64",
    "hesitation": "float64",
    "agreement": "float64",
    "n_annotators": "int64",
    "provenance": "string",
    "id": "string",
}


def test_dpo_export_loads_with_datasets(labelled_project, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "dpo.jsonl"
    path.write_text("".join(export_lines(project=labelled_project, options=ExportOptions(format="dpo"))))

    loaded = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))

    assert os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert loaded.num_rows == labelled_project.items.count()
    for column, dtype in DPO_COLUMNS.items():
        assert loaded.features[column].dtype == dtype, column
    first = loaded[0]
    item = labelled_project.items.order_by("id").first()
    assert first["prompt"] == item.prompt
    assert first["chosen"] == item.responses.get(position=1).text
    assert first["rejected"] == item.responses.get(position=0).text
    assert 0.5 < first["p_chosen"] <= 1.0
    assert first["provenance"] == "human"
