"""The converters on files the tools write (tests/formats/data/real, sources in its README): what each keeps, where it
goes, and how the lead's options change the reading. Pure: no database."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from projects.formats import Options, OptionsInvalid, convert_items, convert_labels, options_from
from projects.formats.common import RATINGS_NOTES, TIE

REAL = Path(__file__).parent / "data" / "real"


def items(fmt: str, name: str, **options: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    with (REAL / name).open("rb") as handle:
        converted = convert_items(fmt, handle, options=Options(**options), seed=7)
    return {row["id"]: row for _, row in converted.rows}, [f"{s.name}: {m}" for s, m in converted.errors]


def labels(fmt: str, name: str, *, mode: str = "binary", points: int = 7, **options: Any):
    with (REAL / name).open("rb") as handle:
        return convert_labels(fmt, handle, mode=mode, likert_points=points, seed=7, options=Options(**options))


def judged(converted) -> dict[tuple[str, str], Any]:
    return {(r["item"], r["annotator"]): r.get("choice", r.get("likert")) for _, r in converted.rows}


# ---- Label Studio --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["label_studio_rlhf_export.json", "label_studio_rlhf_tasks.jsonl"])
def test_label_studio_models_from_data_keys_and_the_rest_lead_only(name):
    rows, errors = items("label-studio", name)

    assert errors == []
    task = rows["902"]
    assert task["prompt"] == "What is the capital of Australia?"
    assert task["responses"] == [
        {"text": "Canberra.", "model": "llama-2-7b-chat"},
        {"text": "Sydney.", "model": "mistral-7b-instruct"},
    ]
    assert task["lead_metadata"] == {"source": "handwritten"}
    assert rows["901"]["lead_metadata"] == {"source": "template-example", "_import": {"meta": {"batch": "pilot-1"}}}
    assert all("metadata" not in row for row in rows.values())


def test_label_studio_pairwise_labels_skip_cancelled_annotations():
    converted = labels("label-studio", "label_studio_rlhf_export.json")

    assert converted.errors == []
    assert judged(converted) == {
        ("901", "label-studio-1"): 0,
        ("901", "label-studio-2"): 1,
        ("902", "label-studio-1"): 0,
    }


def test_label_studio_a_pretty_printed_object_is_one_task_with_one_error():
    # A real task of Label Studio's own test suite: an image classification, pretty-printed over 40 lines.
    _, errors = items("label-studio", "label_studio_previous_export.json")

    assert errors == [
        "task 1 (id 1234): Label Studio task data has no pair of responses "
        "(looked for answer1/answer2, text1/text2, response1/response2, response_a/response_b)"
    ]


def test_label_studio_ratings_of_each_answer_are_refused_by_default():
    converted = labels("label-studio", "label_studio_ratings_per_answer.json", mode="likert")

    assert converted.rows == []
    assert "one rating per response" in converted.errors[0][1]
    assert converted.notes == []


def test_label_studio_ratings_of_each_answer_by_the_rules():
    binary = labels("label-studio", "label_studio_ratings_per_answer.json", ratings_rule="binary")
    likert = labels("label-studio", "label_studio_ratings_per_answer.json", mode="likert", ratings_rule="likert")

    # 2 stars against 5 is never Likert 5: binary prefers answer2, Likert moves 3 points towards it (4 + 3).
    assert judged(binary) == {("911", "label-studio-1"): 1, ("911", "label-studio-2"): TIE}
    assert judged(likert) == {("911", "label-studio-1"): 7, ("911", "label-studio-2"): 4}
    assert binary.notes == [RATINGS_NOTES["binary"]]
    assert likert.notes == [RATINGS_NOTES["likert"]]


def test_likert_from_the_difference_is_capped_and_needs_a_middle_point():
    capped = labels(
        "label-studio", "label_studio_ratings_per_answer.json", mode="likert", points=5, ratings_rule="likert"
    )
    even = labels(
        "label-studio", "label_studio_ratings_per_answer.json", mode="likert", points=6, ratings_rule="likert"
    )

    assert judged(capped)[("911", "label-studio-1")] == 5  # 3 points apart, capped at the top of 1..5
    assert "no middle point" in even.errors[0][1]


# ---- Potato --------------------------------------------------------------------------------------------------------


def test_potato_example_data_with_its_items_key():
    rows, errors = items("potato", "potato_llm_responses.json", items_key="responses")

    assert errors == []
    assert len(rows) == 3
    assert rows["2"]["prompt"] == "Write a haiku about debugging"
    assert rows["2"]["responses"][0].startswith("Code compiles at last")


def test_potato_items_key_is_honoured_and_a_missing_prompt_is_named():
    # The pairwise example compares two texts under items_key "text" and has no prompt: Penumbra needs one.
    _, errors = items("potato", "potato_pairwise_example.json", items_key="text")
    _, wrong_key = items("potato", "potato_llm_responses.json", items_key="text")

    assert errors[0] == "line 1: Potato instance has no prompt (looked for 'prompt', 'question', 'instruction')"
    assert len(errors) == 3
    assert wrong_key[0] == "line 1: Potato instance has no list of responses under 'text' (the scheme's items_key)"


def test_potato_several_schemes_need_the_lead_to_choose():
    converted = labels("potato", "potato_llm_preference_annotations.jsonl")

    assert converted.rows == []
    assert converted.errors[0][1] == (
        "Potato line has several schemes (helpfulness, justification, overall_preference, tone): "
        "choose the one to import (scheme)"
    )


def test_potato_a_chosen_binary_scheme():
    converted = labels("potato", "potato_llm_preference_annotations.jsonl", scheme="helpfulness")

    assert judged(converted) == {("1", "alice"): 0, ("1", "bob"): 1, ("2", "alice"): TIE}


def test_potato_a_1_to_6_scale_keeps_its_halves_on_a_7_point_project_or_is_refused():
    seven = labels("potato", "potato_llm_preference_annotations.jsonl", mode="likert", points=7,
                   scheme="overall_preference", scale=(1, 6))  # fmt: skip
    five = labels("potato", "potato_llm_preference_annotations.jsonl", mode="likert", points=5,
                  scheme="overall_preference", scale=(1, 6))  # fmt: skip
    default_scale = labels("potato", "potato_llm_preference_annotations.jsonl", mode="likert", points=7,
                           scheme="overall_preference")  # fmt: skip

    # 1..3 (A better) stay 1..3, 4..6 (B better) become 5..7: no answer lands on the middle point nobody chose.
    assert judged(seven) == {("1", "alice"): 2, ("1", "bob"): 6, ("2", "alice"): 3}
    assert five.rows == []
    assert (
        "scale 1..6 has 6 points and this project's Likert scale 5: import it into a 7-point project"
        in (five.errors[0][1])
    )
    # Without the option, Potato's default -3..3 is assumed and a 5 is outside it.
    assert "scale_value 5 is outside the scheme's scale -3..3" in default_scale.errors[0][1]


# ---- Argilla -------------------------------------------------------------------------------------------------------


def test_argilla_suggestion_kept_with_its_agent_and_metadata_lead_only():
    rows, errors = items("argilla", "argilla_to_json.json")

    assert errors == []
    assert rows["rec-0001"]["suggestion"] == {"preferred": 0, "model": "gpt-4o-mini", "rationale": ""}
    assert rows["rec-0001"]["lead_metadata"] == {"split": "train", "source": "synthetic-v2"}
    assert "suggestion" not in rows["rec-0002"]


def test_argilla_to_json_writes_no_status_so_the_lead_decides():
    by_default = labels("argilla", "argilla_to_json.json")
    counted = labels("argilla", "argilla_to_json.json", statuses=("submitted", "unknown"))

    assert by_default.rows == []
    assert "to_json writes no status" in by_default.errors[0][1]
    assert judged(counted) == {
        ("rec-0001", "2f6d8a1e-5b7c-4e0a-9c3d-1a2b3c4d5e61"): 0,
        ("rec-0001", "7c1e9b20-3d4f-4a5b-8c6d-7e8f9a0b1c22"): 1,
        ("rec-0002", "2f6d8a1e-5b7c-4e0a-9c3d-1a2b3c4d5e61"): 0,
    }


def test_argilla_flattened_statuses_count_as_the_lead_chooses():
    submitted = labels("argilla", "argilla_to_list_flat.json")
    with_drafts = labels("argilla", "argilla_to_list_flat.json", statuses=("submitted", "draft"))
    rows, _ = items("argilla", "argilla_to_list_flat.json")

    assert judged(submitted) == {("rec-0001", "2f6d8a1e-5b7c-4e0a-9c3d-1a2b3c4d5e61"): 0}
    assert len(with_drafts.rows) == 2
    assert rows["rec-0001"]["suggestion"]["model"] == "gpt-4o-mini"
    assert rows["rec-0001"]["lead_metadata"] == {"split": "train", "source": "synthetic-v2"}


def test_argilla_distilabel_ratings_of_each_generation():
    rows, _ = items("argilla", "argilla_distilabel_ratings.json")
    refused = labels("argilla", "argilla_distilabel_ratings.json", statuses=("unknown",))
    binary = labels("argilla", "argilla_distilabel_ratings.json", statuses=("unknown",), ratings_rule="binary")

    assert rows["3b1c0e2d"]["responses"][1] == "Write good messages."
    # The rating suggestions rate each generation: no preferred response, so they stay with the lead.
    assert "suggestion" not in rows["3b1c0e2d"]
    assert set(rows["3b1c0e2d"]["lead_metadata"]["_import"]["suggestions"]) == {
        "generations-0-rating",
        "generations-1-rating",
    }
    assert "one rating per response" in refused.errors[0][1]
    assert judged(binary) == {
        ("3b1c0e2d", "2f6d8a1e-5b7c-4e0a-9c3d-1a2b3c4d5e61"): 1,
        ("3b1c0e2d", "7c1e9b20-3d4f-4a5b-8c6d-7e8f9a0b1c22"): TIE,
    }


# ---- Hugging Face --------------------------------------------------------------------------------------------------


def _texts(row: dict[str, Any]) -> list[str]:
    return [r["text"] for r in row["responses"]]


def test_hf_the_shapes_trl_documents():
    rows, errors = items("hf", "hf_trl_documented_shapes.jsonl")

    assert errors == []
    standard, implicit, conversational, implicit_chat = rows.values()
    assert (standard["prompt"], sorted(_texts(standard))) == ("The sky is", [" blue.", " green."])
    assert (implicit["prompt"], sorted(_texts(implicit))) == ("The sky is", [" blue.", " green."])
    for row in (conversational, implicit_chat):
        # A conversational prompt is handed on as its messages (the item keeps them), not flattened.
        assert row["prompt"] == [{"role": "user", "content": "What color is the sky?"}]
        assert sorted(_texts(row)) == ["It is blue.", "It is green."]
    assert all(row["responses"][row["gold"]]["text"].strip() in ("blue.", "It is blue.") for row in rows.values())


def test_hf_anthropic_hh_prompt_is_the_shared_dialogue_and_empty_answers_are_kept():
    rows, errors = items("hf", "hf_hh_implicit_prompt.jsonl")

    assert errors == []
    burn, nice = rows.values()
    # The HH dialogue is split into turns: the answers are the next assistant turn.
    assert burn["prompt"] == [
        {"role": "user", "content": "What can I put on a burn?"},
        {"role": "assistant", "content": "Cool running water for twenty minutes, then a clean non-stick dressing."},
        {"role": "user", "content": "Not butter?"},
    ]
    assert sorted(_texts(burn)) == ["Butter is fine.", "No, butter keeps the heat in and can infect the burn."]
    assert nice["prompt"] == [{"role": "user", "content": "Say something nice."}]
    assert sorted(_texts(nice)) == ["", "You are doing well."]
    assert all("Assistant:" not in text for row in rows.values() for text in _texts(row))


def test_hf_ultrafeedback_binarized_has_no_role_markers_and_keeps_every_column():
    rows, _ = items("hf", "hf_ultrafeedback_binarized.jsonl")
    (row,) = rows.values()

    assert sorted(_texts(row)) == ["Eight.", "Six, like all insects."]
    assert row["responses"][row["gold"]]["text"] == "Eight."
    assert set(row["lead_metadata"]) == {"prompt_id", "messages", "score_chosen", "score_rejected"}
    assert row["id"] == row["lead_metadata"]["prompt_id"]


def test_hf_models_and_a_source_column_are_kept_not_replaced():
    rows, _ = items("hf", "hf_ultrafeedback_argilla_cleaned.jsonl")
    (row,) = rows.values()

    chosen = row["responses"][row["gold"]]
    assert chosen["model"] == "starchat"
    assert chosen["text"].startswith("Here's a C++ program")
    assert row["responses"][1 - row["gold"]]["model"] == "pythia-12b"
    assert row["lead_metadata"]["source"] == "evol_instruct"
    assert row["lead_metadata"]["chosen-rating"] == 5.0


def test_hf_ratings_as_labels_follow_the_items_positions():
    rows, _ = items("hf", "hf_ultrafeedback_argilla_cleaned.jsonl")
    (row,) = rows.values()
    converted = labels("hf", "hf_ultrafeedback_argilla_cleaned.jsonl", ratings_rule="binary")

    assert judged(converted) == {(row["id"], "hf-dataset"): row["gold"]}


# ---- reading in general --------------------------------------------------------------------------------------------


def test_a_deeply_nested_file_is_one_clear_error():
    deep = ("[" * 100_000 + "]" * 100_000).encode()

    converted = convert_items("label-studio", io.BytesIO(deep))

    assert [m for _, m in converted.errors] == ["JSON nested too deeply to read."]


def test_json_lines_errors_are_named_per_line():
    lines = b'{"id": 1, "data": {"prompt": "p", "answer1": "a", "answer2": "b"}}\n{"id": 2, oops}\n'

    converted = convert_items("label-studio", io.BytesIO(lines))

    assert len(converted.rows) == 1
    assert [(s.name, m.split(":")[0]) for s, m in converted.errors] == [("line 2", "not valid JSON")]


def test_options_are_checked_and_named():
    assert options_from({"statuses": "submitted, draft", "scale": "1..6"}) == Options(
        statuses=("submitted", "draft"), scale=(1, 6)
    )
    with pytest.raises(OptionsInvalid) as bad:
        options_from({"ratings_rule": "average", "statuses": ["maybe"], "scale": "6..1"})
    assert set(bad.value.errors) == {"ratings_rule", "statuses", "scale"}


def test_real_files_are_what_the_readme_lists():
    listed = (REAL / "README.md").read_text()
    assert all(path.name in listed for path in REAL.iterdir() if path.name != "README.md")
    assert json.loads((REAL / "argilla_to_json.json").read_text())[0]["status"] == "completed"
