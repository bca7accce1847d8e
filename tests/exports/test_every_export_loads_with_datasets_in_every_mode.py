"""Every export loads with ``datasets`` as TRL documents its columns, with the same types in every annotation mode.

Each export is written with its dataset card (README.md) and loaded the way a Hub user loads a folder
(``datasets.load_dataset(folder)``), offline. TRL's preference columns ("prompt", "chosen", "rejected") are strings,
and no column is named "margin", which TRL's RewardTrainer would add to its loss. Files of a binary and an IFS
project load together and concatenate: a hesitation that is null in every binary row is still a float.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model

from aggregation.exports.card import export_card
from aggregation.exports.stream import ExportOptions, export_filename, export_lines
from projects.models import ImportedAnnotator, Project
from tests.exports.round_trip import imported_project

pytestmark = pytest.mark.django_db

datasets = pytest.importorskip("datasets")

FORMATS = ("dpo", "soft", "ifs", "annotations")
MODES = (Project.Mode.BINARY, Project.Mode.LIKERT, Project.Mode.IFS)
#: TRL's documented columns of a preference dataset with an explicit prompt (DPOTrainer, RewardTrainer).
TRL_PREFERENCE = {"prompt": "string", "chosen": "string", "rejected": "string"}


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


@pytest.fixture(scope="module")
def projects(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        built = {mode: imported_project(mode) for mode in MODES}
    yield built
    # Built outside the tests' transactions, so removed by hand: the projects and their imported annotators.
    with django_db_blocker.unblock():
        ids = [p.pk for p in built.values()]
        shadows = list(ImportedAnnotator.objects.filter(project_id__in=ids).values_list("user_id", flat=True))
        Project.objects.filter(pk__in=ids).delete()
        get_user_model().objects.filter(pk__in=shadows).delete()


def _written(project: Project, options: ExportOptions, folder):
    folder.mkdir(parents=True)
    (folder / export_filename(project=project, options=options)).write_text(
        "".join(export_lines(project=project, options=options)), encoding="utf-8"
    )
    (folder / "README.md").write_text(export_card(project=project, options=options), encoding="utf-8")
    return folder


def _load(folder, tmp_path):
    return datasets.load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "cache"))


def _card_features(folder):
    front = (folder / "README.md").read_text(encoding="utf-8").split("---")[1]
    return datasets.Features._from_yaml_list(yaml.safe_load(front)["dataset_info"]["features"])


@pytest.mark.parametrize("export_format", FORMATS)
def test_each_export_loads_with_one_set_of_types_in_every_mode(projects, export_format, tmp_path):
    loaded = {
        mode: _load(_written(project, ExportOptions(format=export_format), tmp_path / mode), tmp_path)
        for mode, project in projects.items()
    }
    for mode, dataset in loaded.items():
        assert dataset.num_rows > 0, mode
        assert "margin" not in dataset.column_names, mode
        assert dataset.features == _card_features(tmp_path / mode), mode
    binary, likert, ifs = (loaded[mode].features for mode in MODES)
    assert binary == likert == ifs


def test_dpo_columns_are_trls_with_models_and_a_float_hesitation(projects, tmp_path):
    dataset = _load(_written(projects["binary"], ExportOptions(format="dpo", ties="mark"), tmp_path / "dpo"), tmp_path)
    for column, dtype in TRL_PREFERENCE.items():
        assert dataset.features[column].dtype == dtype, column
    assert dataset.features["consensus_margin"].dtype == "float64"
    assert dataset.features["hesitation"].dtype == "float64"
    assert set(dataset["hesitation"]) == {None}  # binary labels carry no hesitation: null, typed float
    assert {(row["chosen_model"], row["rejected_model"]) for row in dataset} <= {
        ("model-left", "model-right"),
        ("model-right", "model-left"),
    }
    assert all(0 <= row["consensus_margin"] <= 2 for row in dataset)
    assert all(row["p_chosen"] == pytest.approx(0.5 + row["consensus_margin"] / 4, abs=1e-6) for row in dataset)


@pytest.mark.parametrize("export_format", ["dpo", "soft", "ifs"])
def test_binary_and_ifs_exports_load_together_and_concatenate(projects, export_format, tmp_path):
    options = ExportOptions(format=export_format, ties="mark")
    binary = _written(projects["binary"], options, tmp_path / "binary")
    ifs = _written(projects["ifs"], options, tmp_path / "ifs")
    files = [str(next(folder.glob("*.jsonl"))) for folder in (binary, ifs)]

    together = datasets.load_dataset(
        "json", data_files=files, features=_card_features(binary), split="train", cache_dir=str(tmp_path / "cache")
    )
    joined = datasets.concatenate_datasets([_load(binary, tmp_path), _load(ifs, tmp_path)])

    assert together.num_rows == joined.num_rows == sum(len(Path(f).read_text().splitlines()) for f in files)
    assert together.features == joined.features
    assert together.features["hesitation"].dtype == "float64"


def test_chosen_metadata_keys_become_string_columns(projects, tmp_path):
    options = ExportOptions(format="dpo", ties="mark", metadata=("topic", "difficulty", "absent"))
    dataset = _load(_written(projects["ifs"], options, tmp_path / "meta"), tmp_path)
    for column in ("metadata_topic", "metadata_difficulty", "metadata_absent"):
        assert dataset.features[column].dtype == "string", column
    row = next(r for r in dataset if r["id"] == "item-4")
    assert (row["metadata_topic"], row["metadata_difficulty"], row["metadata_absent"]) == ("topic-1", "4", None)
    assert json.loads(row["metadata_difficulty"]) == 4
