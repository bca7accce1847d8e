"""On real preferences (OpenAI summarize-from-feedback, CNN/DM batch 0: four policies, 437 choices on 45 articles;
the fields kept in tests/maths/data, licence in NOTICE) the leaderboard equals `choix` to 1e-6, and clustering by
article widens the intervals (two workers judged every pair of an article, so its labels are not independent)."""

from __future__ import annotations

import choix
import numpy as np

from aggregation.maths import leaderboard
from tests.maths import real_data_example


def test_real_leaderboard_equals_choix_and_clusters_by_article() -> None:
    c, policies = real_data_example.comparisons(real_data_example.rows())
    assert len(policies) == 4
    assert len(c) == 437
    ours = leaderboard.fit(c, 4, prior=0.0)
    data = [
        (int(a), int(b)) if o == leaderboard.WIN else (int(b), int(a))
        for a, b, o in zip(c.first, c.second, c.outcome, strict=True)
    ]
    reference = choix.ilsr_pairwise(4, data, alpha=0.0, tol=1e-13)
    np.testing.assert_allclose(ours.strength, reference - reference.mean(), atol=1e-6)
    naive = leaderboard.fit(
        leaderboard.Comparisons(np.arange(len(c)), c.first, c.second, c.outcome, c.weight), 4, prior=0.0
    )
    widths = np.diff(ours.strength_ci, axis=1).ravel() / np.diff(naive.strength_ci, axis=1).ravel()
    assert np.all(widths > 1.1)


def test_the_example_prints_its_figures() -> None:
    text = real_data_example.example()
    assert "sup4_6b_ppo_rm4_6b_kl14" in text
    assert "prediction-powered (length rule + sample)" in text
    assert "nan" not in text
