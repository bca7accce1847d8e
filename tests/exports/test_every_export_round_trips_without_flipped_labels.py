"""Export → import into a new project → export again: no label prefers the other response, in any format or mode.

The new project takes its items from the DPO export as a Hugging Face dataset, so its positions are drawn from its
own seed, and its labels from the annotations export, whose rows name their responses by text and model. Every
comparison is by response text, so a label that landed on the other response counts as flipped.
"""

from __future__ import annotations

import json

import pytest

from projects.models import Project
from tests.exports.round_trip import (
    flipped,
    imported_project,
    lines_of,
    moved_project,
    preferred_texts,
    texts_by_position,
)

pytestmark = pytest.mark.django_db

MODES = [Project.Mode.BINARY, Project.Mode.LIKERT, Project.Mode.IFS]


@pytest.fixture(params=MODES)
def moved(request):
    source = imported_project(request.param, seed=11)
    target = moved_project(source, seed=4242, labels=lines_of(source, "annotations"))
    return source, target


def _swapped(source: Project, target: Project) -> int:
    before, after = texts_by_position(source), texts_by_position(target)
    return sum(before[item] != after[item] for item in before)


def _dpo(project: Project) -> dict[str, tuple]:
    found = {}
    for r in map(json.loads, lines_of(project, "dpo", ties="mark")):
        pair = ((r["chosen"], r["chosen_model"]), (r["rejected"], r["rejected_model"]))
        # Equal scores prefer neither response: which one the row calls chosen is arbitrary, so compare them unordered.
        found[r["id"]] = (tuple(sorted(pair)) if r["p_chosen"] == 0.5 else pair, r["p_chosen"], r["tie"])
    return found


def _soft(project: Project) -> dict[tuple[str, str, str], float]:
    """(item, text, other text) in text order → p(text ≻ other text)."""
    found = {}
    for row in map(json.loads, lines_of(project, "soft")):
        item = row["id"].split("#")[0]
        a, b, p = row["response_a"], row["response_b"], row["p_a_over_b"]
        found[(item, a, b) if a < b else (item, b, a)] = p if a < b else round(1 - p, 6)
    return found


def _ifs(project: Project) -> dict[str, tuple]:
    found = {}
    for row in map(json.loads, lines_of(project, "ifs")):
        by_position = {r["position"]: r for r in row["responses"]}
        scores = {r["text"]: sorted((a["criterion"], a["score"]) for a in r["aggregates"]) for r in row["responses"]}
        best = None if row["best_position"] in (None, -1) else by_position[row["best_position"]]["text"]
        found[row["id"]] = (best, row["p_best"], json.dumps(scores, sort_keys=True))
    return found


def test_the_new_project_stores_some_items_the_other_way_round(moved):
    source, target = moved
    # Without this the round trips below could not catch a label read by position.
    assert 0 < _swapped(source, target) < len(texts_by_position(source))


def test_annotations_round_trip_with_no_flipped_label(moved):
    source, target = moved
    before = preferred_texts(source)
    assert len(before) == len(preferred_texts(target)) > 0
    assert flipped(before, preferred_texts(target)) == 0


def test_dpo_round_trip_with_no_flipped_pair(moved):
    source, target = moved
    before = _dpo(source)
    assert before
    assert flipped(before, _dpo(target)) == 0


def test_soft_round_trip_with_no_flipped_pair(moved):
    source, target = moved
    before = _soft(source)
    assert before
    assert flipped(before, _soft(target)) == 0


def test_ifs_round_trip_with_no_flipped_item(moved):
    source, target = moved
    before = _ifs(source)
    assert before
    assert flipped(before, _ifs(target)) == 0


def test_labels_without_their_responses_land_by_position_and_flip():
    """The control: the same rows without "responses" are read by stored position, as before, and flip."""
    source = imported_project(Project.Mode.BINARY, seed=11)
    bare = []
    for line in lines_of(source, "annotations"):
        row = json.loads(line)
        del row["responses"]
        bare.append(json.dumps(row))
    target = moved_project(source, seed=4242, labels=bare)
    assert flipped(preferred_texts(source), preferred_texts(target)) > 0
