"""Every mode projects onto s ∈ [−1, 1] with +1 = response 0 preferred, so agreement is comparable across modes."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import agreement, ifs


def test_binary() -> None:
    s = agreement.signed_preference_binary(np.array([0, 1, -1, 0]), mask=np.array([True, True, True, False]))
    assert s[:3].tolist() == [1.0, -1.0, 0.0]
    assert np.isnan(s[3])
    with pytest.raises(ValueError, match="binary choices"):
        agreement.signed_preference_binary(np.array([2]))


@pytest.mark.parametrize(
    ("points", "values", "expected"),
    [
        (7, [1, 4, 7, 2], [1.0, 0.0, -1.0, 2 / 3]),
        (5, [1, 3, 5], [1.0, 0.0, -1.0]),
        (9, [1, 4, 6, 9], [1.0, 0.25, -0.25, -1.0]),
        (4, [1, 2, 3, 4], [1.0, 1 / 3, -1 / 3, -1.0]),
    ],
)
def test_likert_point_one_prefers_response_zero(points: int, values: list[int], expected: list[float]) -> None:
    assert agreement.signed_preference_likert(np.array(values), points) == pytest.approx(expected)


def test_likert_rejects_values_off_the_scale() -> None:
    with pytest.raises(ValueError, match="Likert"):
        agreement.signed_preference_likert(np.array([0, 3]), 5)
    s = agreement.signed_preference_likert(np.array([0, 3]), 5, mask=np.array([False, True]))
    assert np.isnan(s[0])
    assert s[1] == 0.0


def test_ifs_half_the_score_difference() -> None:
    # One item, two responses, two annotators.
    mu = np.array([[[0.9, 0.2], [0.1, 0.2]]])
    nu = np.array([[[0.1, 0.5], [0.8, 0.5]]])
    s = agreement.signed_preference_ifs(mu, nu)
    # Annotator 0: S = 0.8 vs −0.7 → 0.75; annotator 1: equal scores → 0.
    assert s.tolist() == [[pytest.approx(0.75), pytest.approx(0.0)]]


def test_ifs_with_weighted_criteria_and_a_missing_value() -> None:
    mu = np.zeros((1, 2, 2, 2))
    nu = np.zeros((1, 2, 2, 2))
    mu[0, 0, 0, :] = 1.0  # response 0 fully supported on criterion 0 by both
    nu[0, 1, 1, :] = 1.0  # response 1 fully opposed on criterion 1 by both
    mask = np.ones(mu.shape, dtype=bool)
    mask[0, 1, 1, 1] = False  # annotator 1 skipped one value
    s = agreement.signed_preference_ifs(mu, nu, criterion_weights=[0.75, 0.25], mask=mask)
    # S_0 = 0.75·1 = 0.75, S_1 = 0.25·(−1) = −0.25 → s = 0.5; annotator 1 is incomplete → NaN.
    assert s[0, 0] == pytest.approx(0.5)
    assert np.isnan(s[0, 1])


def test_ifs_extremes_reach_plus_and_minus_one() -> None:
    mu = np.array([[[1.0], [0.0]], [[0.0], [1.0]]])
    nu = np.array([[[0.0], [1.0]], [[1.0], [0.0]]])
    assert agreement.signed_preference_ifs(mu, nu)[:, 0].tolist() == [1.0, -1.0]


def test_sign_with_tie_band() -> None:
    s = np.array([0.8, -0.3, 0.04, -0.05, np.nan, 0.0])
    signs = agreement.preference_sign(s, tie_band=0.05)
    assert signs[:4].tolist() == [1.0, -1.0, 0.0, -1.0]
    assert np.isnan(signs[4])
    assert signs[5] == 0.0


def test_same_preferences_in_three_modes_give_the_same_nominal_figures() -> None:
    choices = np.array([[0, 0, 1], [1, 1, -1], [0, 1, 0], [-1, -1, 0]])
    binary = agreement.signed_preference_binary(choices)
    likert_values = np.select([choices == 0, choices == 1], [2, 6], 4)  # 7-point: 2 leans to 0, 6 to 1
    likert = agreement.signed_preference_likert(likert_values, 7)
    scores_0 = np.select([choices == 0, choices == 1], [0.6, -0.2], 0.1)
    scores_1 = np.select([choices == 0, choices == 1], [-0.2, 0.6], 0.1)
    mu = np.stack([np.clip(scores_0, 0, 1), np.clip(scores_1, 0, 1)], axis=1)
    nu = np.stack([np.clip(-scores_0, 0, 1), np.clip(-scores_1, 0, 1)], axis=1)
    ifs_s = agreement.signed_preference_ifs(mu, nu)
    figures = [agreement.cross_mode_agreement(s, interval=False) for s in (binary, likert, ifs_s)]
    for key in ("alpha_nominal", "pairwise_with_ties", "pairwise_without_ties"):
        assert figures[0][key].value == pytest.approx(figures[1][key].value)
        assert figures[0][key].value == pytest.approx(figures[2][key].value)


def test_ifs_signs_agree_with_preferred_responses_at_twice_the_band() -> None:
    rng = np.random.default_rng(4)
    mu = rng.integers(0, 1001, (2000, 2, 3)) / 1000
    nu = np.floor(rng.random(mu.shape) * (1000 - mu * 1000)) / 1000
    mu[:5, 1], nu[:5, 1] = mu[:5, 0] - 0.1, nu[:5, 0]  # gaps of exactly the tolerance, up to binary rounding
    mu[:5, 1] = np.clip(mu[:5, 1], 0, 1)
    signs = agreement.preference_sign(agreement.signed_preference_ifs(mu, nu), tie_band=0.05)
    preferred = ifs.preferred_response(ifs.score(mu, nu), tolerance=0.1)
    expected = np.select([preferred == 0, preferred == 1], [1.0, -1.0], 0.0)
    np.testing.assert_array_equal(signs, expected)
