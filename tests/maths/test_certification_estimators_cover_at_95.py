"""The design-based estimators of the model's accuracy are unbiased and their 95 % intervals cover the truth 95 % of
the time.

1,000 simulated projects (tests/maths/certification_simulation.py: 8,000 items each with a stated confidence, a
model whose accuracy rises with it, 250 items drawn stratified by confidence with equal allocation, 1-4 blind labels
per item of shared difficulty, gold on half the items, verification answers mixed in). Every headline interval
must cover between 93.5 % and 96.5 % (Monte-Carlo standard error 0.7 % at 1,000 projects), and every estimate's
mean error must be within 4 Monte-Carlo standard errors of zero.

Per confidence bin (50 items drawn from about 1,000-2,000) the items are drawn without replacement from a finite
bin: the variance carries the finite population correction of a two-stage design (aggregation.maths.accuracy), and those
intervals are held to the same 93.5-96.5 %.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.maths.certification_simulation import Scenario, summarise

N_PROJECTS = 1000
HEADLINE = ("blind_hajek", "blind_ht", "majority_hajek", "gold_hajek", "gold_ht", "above_cut_hajek", "keep_rate")
BINS = tuple(f"bin_{b}" for b in range(5))

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    return summarise(dataclasses.replace(Scenario(), n_projects=N_PROJECTS))


@pytest.mark.parametrize("figure", HEADLINE)
def test_headline_intervals_cover_95_percent(table, figure: str) -> None:
    assert 0.935 <= table[figure]["coverage"] <= 0.965, table[figure]


@pytest.mark.parametrize("figure", BINS)
def test_calibration_bin_intervals_cover_95_percent(table, figure: str) -> None:
    assert 0.935 <= table[figure]["coverage"] <= 0.965, table[figure]


@pytest.mark.parametrize("figure", HEADLINE + BINS)
def test_estimates_are_unbiased(table, figure: str) -> None:
    row = table[figure]
    assert abs(row["bias"]) <= 4 * row["bias_se"], row


def test_a_certified_confidence_cut_is_almost_never_wrong(table) -> None:
    assert table["wrong_cut"]["rate"] <= 0.025
