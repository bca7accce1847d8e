"""The validation of an endpoint's answer: the same per-mille IFS rule as every other layer."""

from __future__ import annotations

import json

import pytest

from projects.models import TIE
from suggestions.llm import AnswerInvalid, parse_answer


def _answer(**overrides) -> str:
    data = {"preferred": 1, "rationale": "Better.", "ifs": [{"mu": 0.7, "nu": 0.2}, {"mu": 0.1, "nu": 0.6}]}
    data.update(overrides)
    return json.dumps(data)


def test_a_valid_answer_becomes_positions_and_per_mille():
    parsed = parse_answer(_answer(), 2)
    assert parsed.preferred_position == 0
    assert parsed.values == [(700, 200), (100, 600)]


def test_tie_and_fenced_json_are_understood():
    parsed = parse_answer("```json\n" + _answer(preferred="tie") + "\n```", 2)
    assert parsed.preferred_position == TIE


def test_mu_plus_nu_of_exactly_one_is_accepted():
    assert parse_answer(_answer(ifs=[{"mu": 0.3, "nu": 0.7}, {"mu": 0.1, "nu": 0.9}]), 2).values == [
        (300, 700),
        (100, 900),
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json at all", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        (_answer(preferred=0), "names no response"),
        (_answer(preferred="A"), "response number"),
        (_answer(rationale=None), "must be text"),
        (_answer(ifs=[{"mu": 0.5, "nu": 0.2}]), "one"),
        (_answer(ifs=[{"mu": 0.5}, {"mu": 0.1, "nu": 0.2}]), '"mu" and "nu"'),
        (_answer(ifs=[{"mu": 1.2, "nu": 0.0}, {"mu": 0.1, "nu": 0.2}]), "outside 0..1"),
        (_answer(ifs=[{"mu": -0.1, "nu": 0.0}, {"mu": 0.1, "nu": 0.2}]), "outside 0..1"),
        (_answer(ifs=[{"mu": 0.6, "nu": 0.5}, {"mu": 0.1, "nu": 0.2}]), "more than 1"),
        (_answer(ifs=[{"mu": 0.3333, "nu": 0.2}, {"mu": 0.1, "nu": 0.2}]), "thousandths"),
        (_answer(ifs=[{"mu": "0.3", "nu": 0.2}, {"mu": 0.1, "nu": 0.2}]), "not a number"),
        (json.dumps({"preferred": 1, "ifs": []}), "lacks 'rationale'"),
    ],
)
def test_invalid_answers_are_refused_with_a_reason(content, reason):
    with pytest.raises(AnswerInvalid, match=reason):
        parse_answer(content, 2)
