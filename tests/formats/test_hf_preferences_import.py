"""Hugging Face preference datasets (TRL columns) as JSON Lines or Parquet; ratings become binary labels."""

from __future__ import annotations

import pytest
from datasets import Dataset
from django.contrib.auth import get_user_model

from annotation.imports.formats import labels_import_formatted
from projects.formats.common import RATINGS_NOTES
from projects.imports.formats import items_import_formatted
from projects.imports.items import ImportRejected
from projects.models import TIE, Item, Project
from tests.factories import ProjectFactory
from tests.formats.helpers import DATA, import_items, import_labels, snapshot, stored_labels

pytestmark = pytest.mark.django_db

BINARY_RULE = {"ratings_rule": "binary"}


def _by_prompt(project: Project) -> dict[str, Item]:
    return {item.prompt: item for item in Item.objects.filter(project=project).prefetch_related("responses")}


def _chosen_position(item: Item, chosen: str) -> int:
    return next(r.position for r in item.responses.all() if r.text == chosen)


def test_jsonl_items_keep_chosen_as_gold_and_ratings_become_labels():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    items = import_items(project, "hf", "hf_preferences.jsonl")
    labels = import_labels(project, "hf", "hf_preferences.jsonl", reading=BINARY_RULE)

    assert items.created == 3
    stored = _by_prompt(project)
    spider = stored["How many legs does a spider have?"]
    assert spider.gold_position == _chosen_position(spider, "Eight.")
    # The ratings give the answer away: only leads may read them; the dataset's source column is kept as it is.
    assert spider.metadata == {}
    assert spider.lead_metadata == {"chosen_rating": 5.0, "rejected_rating": 1.0, "source": "sharegpt"}
    http = stored["What does HTTP 404 mean?"]
    assert http.gold_position == _chosen_position(http, "The server found no resource at that URL.")
    assert labels.created == 3
    assert labels.notes == [RATINGS_NOTES["binary"]]
    assert stored_labels(project) == {
        (spider.external_id, "hf-dataset"): spider.gold_position,
        (stored["Suggest a name for a grey cat."].external_id, "hf-dataset"): TIE,  # equal ratings
        (http.external_id, "hf-dataset"): http.gold_position,
    }


def test_parquet_gives_the_same_items_and_labels(tmp_path):
    rows = Dataset.from_json(str(DATA / "hf_preferences.jsonl"))
    parquet = tmp_path / "prefs.parquet"
    rows.to_parquet(str(parquet))
    from_jsonl = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(from_jsonl, "hf", "hf_preferences.jsonl")
    import_labels(from_jsonl, "hf", "hf_preferences.jsonl", reading=BINARY_RULE)
    expected_labels = stored_labels(from_jsonl)
    expected_gold = {i.external_id: i.gold_position for i in from_jsonl.items.all()}
    # The same file again from scratch: an import never reuses another project's annotator account.
    from_jsonl.delete()
    get_user_model().objects.filter(username="hf-dataset").delete()
    from_parquet = ProjectFactory(mode=Project.Mode.BINARY)

    with parquet.open("rb") as handle:
        items_import_formatted(project=from_parquet, fmt="hf", handle=handle)
    with parquet.open("rb") as handle:
        labels_import_formatted(project=from_parquet, fmt="hf", handle=handle, reading=BINARY_RULE)

    assert len(stored_labels(from_parquet)) == 3
    assert stored_labels(from_parquet) == expected_labels
    assert {i.external_id: i.gold_position for i in from_parquet.items.all()} == expected_gold


def test_bad_rows_are_named_and_nothing_changes():
    project = ProjectFactory(mode=Project.Mode.BINARY)

    with pytest.raises(ImportRejected) as rejected:
        import_items(project, "hf", "hf_bad.jsonl")
    assert [str(e) for e in rejected.value.errors] == [
        "line 2: Hugging Face dataset row has no 'rejected' (TRL preference columns)"
    ]
    assert snapshot(project) == (0, 0)

    import_items(project, "hf", "hf_preferences.jsonl")
    with pytest.raises(ImportRejected) as labels_rejected:
        import_labels(project, "hf", "hf_bad.jsonl", reading=BINARY_RULE)
    assert [str(e) for e in labels_rejected.value.errors] == [
        "line 2: Hugging Face dataset row has no 'rejected' (TRL preference columns)",
        "line 3: Hugging Face dataset rejected_rating must be a number, not 'high'",
    ]
    assert snapshot(project) == (3, 0)


def test_ratings_become_labels_only_by_the_rule_the_lead_picks():
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=7)
    import_items(project, "hf", "hf_preferences.jsonl")

    with pytest.raises(ImportRejected) as by_default:
        import_labels(project, "hf", "hf_preferences.jsonl")
    with pytest.raises(ImportRejected) as binary_rule:
        import_labels(project, "hf", "hf_preferences.jsonl", reading=BINARY_RULE)
    assert by_default.value.errors[0].message.startswith("Hugging Face dataset gives one rating per response")
    assert binary_rule.value.errors[0].message == "ratings_rule=binary makes binary labels; this project is likert"
    assert snapshot(project) == (3, 0)

    labels = import_labels(project, "hf", "hf_preferences.jsonl", reading={"ratings_rule": "likert"})

    stored = _by_prompt(project)
    spider = stored["How many legs does a spider have?"]
    # 5 against 1: four points apart, capped at the end of the scale on the chosen answer's side.
    assert stored_labels(project)[(spider.external_id, "hf-dataset")] == (1 if spider.gold_position == 0 else 7)
    assert stored_labels(project)[(stored["Suggest a name for a grey cat."].external_id, "hf-dataset")] == 4
    assert labels.notes == [RATINGS_NOTES["likert"]]
