"""Score, accuracy, hesitation, distance, entropy, confidence, clarity, criteria, pairwise preference and the
preferred response, on hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aggregation.maths import ifs


def test_score_accuracy_hesitation() -> None:
    assert ifs.score(0.6, 0.3) == pytest.approx(0.3)
    assert ifs.accuracy(0.6, 0.3) == pytest.approx(0.9)
    assert ifs.hesitation(0.6, 0.3) == pytest.approx(0.1)
    value = ifs.IFS(np.array([0.6]), np.array([0.3]))
    assert value.hesitation == pytest.approx([0.1])
    assert value.score == pytest.approx([0.3])


def test_distance_per_value_includes_hesitation() -> None:
    assert ifs.distance(1.0, 0.0, 0.0, 1.0) == pytest.approx(1.0)
    assert ifs.distance(1.0, 0.0, 0.0, 0.0) == pytest.approx(1.0)  # crisp yes vs full hesitation
    assert ifs.distance(0.5, 0.5, 0.0, 0.0) == pytest.approx(math.sqrt(0.5 * (0.25 + 0.25 + 1.0)))
    assert ifs.distance(0.3, 0.2, 0.3, 0.2) == 0.0


def test_distance_between_sets_is_the_mean_or_the_rms() -> None:
    a_mu, a_nu = np.array([1.0, 0.3]), np.array([0.0, 0.2])
    b_mu, b_nu = np.array([0.0, 0.3]), np.array([1.0, 0.2])
    assert ifs.distance(a_mu, a_nu, b_mu, b_nu, axis=0) == pytest.approx(0.5)
    assert ifs.distance(a_mu, a_nu, b_mu, b_nu, axis=0, how="rms") == pytest.approx(math.sqrt(0.5))
    mask = np.array([True, False])
    assert ifs.distance(a_mu, a_nu, b_mu, b_nu, axis=0, mask=mask) == pytest.approx(1.0)


def test_entropy_szmidt_kacprzyk() -> None:
    assert ifs.entropy(1.0, 0.0) == pytest.approx(0.0)
    assert ifs.entropy(0.0, 1.0) == pytest.approx(0.0)
    assert ifs.entropy(0.0, 0.0) == pytest.approx(1.0)
    assert ifs.entropy(0.4, 0.4) == pytest.approx(1.0)
    assert ifs.entropy(0.6, 0.2) == pytest.approx((0.2 + 0.2) / (0.6 + 0.2))
    assert ifs.entropy(np.array([1.0, 0.0]), np.array([0.0, 0.0]), axis=0) == pytest.approx(0.5)


def test_confidence_and_clarity() -> None:
    mu = np.array([[0.6, 0.2], [0.0, 1.0]])
    nu = np.array([[0.3, 0.2], [0.0, 0.0]])
    # π = 0.1, 0.6, 1.0, 0.0 → mean 0.425; |μ − ν| = 0.3, 0, 0, 1 → mean 0.325.
    assert float(ifs.confidence(mu, nu)) == pytest.approx(1 - 0.425)
    assert float(ifs.clarity(mu, nu)) == pytest.approx(0.325)
    assert ifs.confidence(mu, nu, axis=1) == pytest.approx([1 - 0.35, 1 - 0.5])
    present = np.array([[True, False], [True, True]])
    assert ifs.clarity(mu, nu, axis=1, mask=present) == pytest.approx([0.3, 0.5])


def test_combine_criteria_paper_eqs_5_6() -> None:
    mu = np.array([[0.8, 0.2]])
    nu = np.array([[0.1, 0.6]])
    out = ifs.combine_criteria(mu, nu, [3.0, 1.0], axis=-1)
    assert out.mu == pytest.approx([0.65])
    assert out.nu == pytest.approx([0.225])
    raw = np.stack([mu, nu], axis=0)[..., None]  # an annotator axis after the criteria
    assert ifs.combine_criteria(raw[0], raw[1], None, axis=1).mu[0, 0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="criterion weights"):
        ifs.combine_criteria(mu, nu, [0.5, 0.5, 0.0])


def test_pairwise_preference_and_soft_label() -> None:
    r = ifs.pairwise_preference(0.7, 0.2, 0.4, 0.5)
    assert (float(r.mu), float(r.nu)) == pytest.approx((0.6, 0.3))
    back = ifs.pairwise_preference(0.4, 0.5, 0.7, 0.2)
    assert (float(back.mu), float(back.nu)) == pytest.approx((0.3, 0.6))
    assert float(r.hesitation) == pytest.approx((0.1 + 0.1) / 2)
    p = float(ifs.soft_label(0.7, 0.2, 0.4, 0.5))
    assert p == pytest.approx(0.5 + (0.5 - (-0.1)) / 4)
    assert p == pytest.approx(0.5 + float(r.score) / 2)
    assert float(ifs.soft_label(0.4, 0.5, 0.7, 0.2)) == pytest.approx(1 - p)
    assert float(ifs.soft_label(1.0, 0.0, 0.0, 1.0)) == 1.0
    assert float(ifs.margin(0.7, 0.2, 0.4, 0.5)) == pytest.approx(0.6)


def test_all_pairs_for_three_responses() -> None:
    mu = np.array([[0.7, 0.4, 0.1]])
    nu = np.array([[0.2, 0.5, 0.8]])
    table = ifs.all_pairs(mu, nu)
    assert list(zip(table.first, table.second, strict=True)) == [(0, 1), (0, 2), (1, 2)]
    assert table.soft_label.shape == (1, 3)
    assert table.soft_label[0, 0] == pytest.approx(float(ifs.soft_label(0.7, 0.2, 0.4, 0.5)))
    assert table.margin[0] == pytest.approx([0.6, 1.2, 0.6])
    assert table.preference.mu[0, 1] == pytest.approx((0.7 + 0.8) / 2)


def test_preferred_response_with_tolerance() -> None:
    scores = np.array([[0.5, 0.1], [0.3, 0.25], [0.2, 0.2], [0.1, 0.6], [np.nan, 0.2]])
    assert ifs.preferred_response(scores, 0.1).tolist() == [0, ifs.TIE, ifs.TIE, 1, ifs.UNDEFINED]
    # A gap equal to the tolerance is not a tie, even when binary floating point makes it 0.0999…
    assert ifs.preferred_response(np.array([[0.3, 0.2]]), 0.1).tolist() == [0]
    assert ifs.preferred_response(np.array([[0.2, 0.2]]), 0.0).tolist() == [ifs.TIE]
    three = np.array([[0.1, 0.6, 0.5], [0.9, 0.1, 0.3]])
    assert ifs.preferred_response(three, 0.05).tolist() == [1, 0]
    assert ifs.preferred_response(three, 0.2).tolist() == [ifs.TIE, 0]


def test_rank_responses_by_score_then_accuracy() -> None:
    mu = np.array([[0.3, 0.5, 0.4]])
    nu = np.array([[0.1, 0.3, 0.0]])
    # S = 0.2, 0.2, 0.4; H = 0.4, 0.8, 0.4 → 2 first, then 1 (higher H), then 0.
    assert ifs.rank_responses(mu, nu).tolist() == [[2, 1, 0]]
