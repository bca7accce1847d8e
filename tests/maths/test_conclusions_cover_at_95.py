"""The conclusions figures' 95 % intervals cover the truth in simulated projects (tests/maths/conclusions_simulation.py;
the 1,000-run table is in docs/guides/conclusions.md). A smaller run here, with bounds wide enough for its
Monte-Carlo error and narrow enough that a broken interval fails: the leaderboard's strengths and win rates, the
prediction-powered figures with a good and with a length-biased judge, and the annotator-population interval, beside
today's item interval, which must visibly miss when annotators are drawn per project.

Monte-Carlo standard error of a coverage near 0.95 from 200 runs: 1.5 %; the bounds 0.91-0.985 sit 2.5 and more
standard errors away, while an interval that ignored the clustering (or the annotators) covers 70-88 %.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.maths import conclusions_simulation as sim

pytestmark = [pytest.mark.slow]
RUNS = 200
LOW, HIGH = 0.91, 0.985


def _mean(rows: list[dict[str, float]], key: str) -> float:
    return float(np.mean([row[key] for row in rows]))


def test_leaderboard_intervals_cover() -> None:
    rows = [sim.leaderboard_run(1, r) for r in range(120)]
    # 5 strengths and 20 win rates per run: pooled over 600 and 2,400 intervals.
    for key in ("strength", "win_rate", "mean_win_rate"):
        assert LOW + 0.01 <= _mean(rows, key) <= HIGH - 0.01, key


@pytest.mark.parametrize("judge", ["good", "biased"])
def test_prediction_powered_intervals_cover_and_are_never_wider(judge: str) -> None:
    rows = [sim.ppi_run(1, r, judge) for r in range(RUNS)]
    for figure in ("share_first", "mean_margin", "win_rate_ab"):
        assert LOW <= _mean(rows, f"{figure}_ppi") <= HIGH, figure
        ratios = [row[f"{figure}_width_ratio"] for row in rows]
        assert max(ratios) <= 1.0 + 1e-9  # never wider than people alone (the promise is ≤ 5 %)
        if judge == "good":
            assert np.mean(ratios) < 0.85, figure
    if judge == "biased":
        # The LLM-only figure really is off: PPI covers because it removes the bias, not because there is none.
        assert abs(_mean(rows, "share_first_llm_bias")) > 0.03
        assert abs(_mean(rows, "win_rate_ab_llm_bias")) > 0.02


@pytest.mark.parametrize("design", ["three_of_eight", "dense", "sparse", "few", "three_dense"])
def test_annotator_population_interval_covers_where_the_item_interval_does_not(design: str) -> None:
    """Dense, sparse and few-annotator designs: the two-way interval covers at 95 % (the old jackknife covered
    98 % in the sparse design), holds the item interval whole, and the item interval misses."""
    annotators, items, per_item = sim.DESIGNS[design]
    rows = [sim.population_run(1, r, annotators, items, per_item) for r in range(RUNS)]
    assert LOW <= _mean(rows, "two_way") <= HIGH
    assert _mean(rows, "holds_item_interval") == 1.0
    assert _mean(rows, "items_only") < 0.9
