"""The dataset card is a README.md in the Hugging Face layout: a YAML metadata block that parses, then the card's
sections, with counts by provenance and every figure with its interval, or "not reported" with the reason."""

from __future__ import annotations

import yaml

from aggregation.maths.dataset_card import CardFacts, dataset_card, size_category


def _facts(**overrides) -> CardFacts:
    base = {
        "name": 'Chat: "helpfulness" v2',
        "slug": "chat-v2",
        "mode": "ifs",
        "criteria": ["overall"],
        "items": 1500,
        "files": ["dpo.jsonl"],
        "export_format": "dpo",
        "generated_at": "2026-12-01T06:00:00Z",
        "provenance": {"human_blind": 120, "human_shown": 800, "model_handoff": 0, "model_certified": 400},
        "labels": 920,
        "labels_with_suggestion_shown": 800,
        "blind_agreement": {"value": 0.82, "n": 120, "ci": [0.74, 0.88], "reason": None},
        "anchoring_gap": {"value": None, "n": 3, "ci": None, "hint": "needs 5 comparisons on each side"},
        "certification": {
            "certified": True,
            "threshold": 0.8,
            "reason": "lower bound 0.812 reaches the threshold 0.800",
            "estimate": {"value": 0.9, "ci": [0.812, 0.95], "items": 250},
        },
        "calibration": [{"low": 0.5, "high": 0.6, "value": 0.55, "ci": [0.41, 0.68], "items": 50}],
        "verification": {"keep": 0.9, "keep_ci": [0.85, 0.94], "change": 0.1, "answers": 200, "items": 150},
    }
    base.update(overrides)
    return CardFacts(**base)


def test_the_card_opens_with_yaml_metadata_that_parses() -> None:
    card = dataset_card(_facts())
    assert card.startswith("---\n")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["pretty_name"] == 'Chat: "helpfulness" v2'
    assert meta["size_categories"] == ["1K<n<10K"]
    assert meta["configs"][0]["data_files"][0] == {"split": "train", "path": "dpo.jsonl"}
    assert "preference" in meta["tags"]


def test_the_card_states_provenance_and_figures_with_intervals() -> None:
    card = dataset_card(_facts())
    for heading in (
        "# Dataset Card for",
        "## Dataset Details",
        "## Uses",
        "## Dataset Structure",
        "## Dataset Creation",
        "## Bias, Risks, and Limitations",
    ):
        assert heading in card
    assert "| `human_blind` | 120 |" in card
    assert "| `model_certified` | 400 |" in card
    assert "82.0% (95 % interval 74.0% to 88.0%), 120 comparisons" in card
    assert "not reported (needs 5 comparisons on each side)" in card
    assert "**certified** at threshold 80%" in card
    assert "800 of 920 (87.0%)" in card
    assert "kept 90.0% (95 % interval 85.0% to 94.0%)" in card
    assert "| 0.50-0.60 | 55.0% | 41.0% to 68.0% | 50 |" in card


def test_a_project_without_figures_says_not_reported_never_zero() -> None:
    card = dataset_card(
        _facts(
            blind_agreement=None,
            certification=None,
            calibration=[],
            verification=None,
            labels=0,
            labels_with_suggestion_shown=0,
        )
    )
    assert "Blind agreement (model vs unaided people): not reported." in card
    assert "Certification: none run." in card
    assert "0 of 0 (not reported)" in card


def test_size_categories() -> None:
    assert [size_category(n) for n in (0, 999, 1000, 99_999, 100_000, 5_000_000)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
        "1M<n<10M",
    ]
