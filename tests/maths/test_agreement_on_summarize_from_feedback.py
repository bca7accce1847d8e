"""Agreement on real multi-annotator preferences: OpenAI's summarize-from-feedback comparisons (batch 13, Reddit
TL;DR), 1,097 binary choices by 27 workers on 905 posts, up to 11 workers on one post, each with a 1-9 confidence.

Checked against straightforward loops written here and against the `krippendorff` package.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import krippendorff
import numpy as np
import pytest

from aggregation.maths import agreement
from tests.data import comparisons


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return comparisons("batch13")


@pytest.fixture(scope="module")
def choices(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Units (posts) × coders (workers) matrix of choices, its mask, and the confidences."""
    matrix, present, _, _ = agreement.units_by_coders(
        [r["info"]["id"] for r in rows], [r["worker"] for r in rows], [r["choice"] for r in rows]
    )
    confidence, _, _, _ = agreement.units_by_coders(
        [r["info"]["id"] for r in rows], [r["worker"] for r in rows], [r["extra"]["confidence"] for r in rows]
    )
    return matrix, present, confidence


def test_the_file_is_what_the_test_expects(rows: list[dict], choices) -> None:
    matrix, present, _ = choices
    assert len(rows) == 1097
    assert matrix.shape == (905, 27)
    assert int(present.sum()) == 1097
    assert int(present.sum(axis=1).max()) == 11
    # Every post shows its two summaries in the same order to every worker, so choice indices are comparable.
    orders = defaultdict(set)
    for r in rows:
        orders[r["info"]["id"]].add(tuple(s["text"] for s in r["summaries"]))
    assert all(len(o) == 1 for o in orders.values())


def by_item(rows: list[dict], field) -> dict[str, list]:
    grouped: dict[str, list] = defaultdict(list)
    for r in rows:
        grouped[r["info"]["id"]].append(field(r))
    return grouped


def test_pairwise_agreement_matches_a_loop(rows: list[dict], choices) -> None:
    matrix, present, _ = choices
    agreeing = pairs = 0
    for labels in by_item(rows, lambda r: r["choice"]).values():
        for a, b in itertools.combinations(labels, 2):
            pairs += 1
            agreeing += a == b
    signed = agreement.signed_preference_binary(matrix, present)
    result = agreement.pairwise_agreement(agreement.preference_sign(signed), present)
    assert result.n == pairs
    assert result.value == pytest.approx(agreeing / pairs, abs=1e-12)
    assert result.value is not None
    assert 0.5 < result.value < 0.9  # real people agree better than chance, far from perfectly


def nominal_alpha_by_coincidences(units: list[list]) -> float:
    """Krippendorff's nominal α from the coincidence matrix, built pair by pair."""
    coincidence: dict[tuple, float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidence[(values[i], values[j])] += 1.0 / (m - 1)
    categories = sorted({c for pair in coincidence for c in pair})
    n_c = {c: sum(v for (a, _), v in coincidence.items() if a == c) for c in categories}
    n = sum(n_c.values())
    observed = sum(v for (a, b), v in coincidence.items() if a != b)
    expected = sum(n_c[a] * n_c[b] for a in categories for b in categories if a != b) / (n - 1)
    return 1.0 - observed / expected


def test_nominal_alpha_matches_a_coincidence_loop_and_the_package(rows: list[dict], choices) -> None:
    matrix, present, _ = choices
    ours = agreement.krippendorff_alpha_nominal(matrix, present)
    assert ours == pytest.approx(nominal_alpha_by_coincidences(list(by_item(rows, lambda r: r["choice"]).values())))
    assert ours == pytest.approx(
        krippendorff.alpha(np.where(present, matrix, np.nan).T, level_of_measurement="nominal"), abs=1e-9
    )


def test_confidence_is_a_signed_preference_consistent_with_the_choice(choices) -> None:
    matrix, present, confidence = choices
    # Confidence 1 = surely summary 0 … 9 = surely summary 1 (5, "no preference", never occurs here).
    likert = agreement.signed_preference_likert(confidence, 9, present)
    binary = agreement.signed_preference_binary(matrix, present)
    assert np.array_equal(np.sign(likert[present]), binary[present])


def test_interval_alpha_on_confidence_matches_the_package(choices) -> None:
    _, present, confidence = choices
    signed = agreement.signed_preference_likert(confidence, 9, present)
    ours = agreement.krippendorff_alpha_interval(signed, present)
    expected = krippendorff.alpha(signed.T, level_of_measurement="interval")
    assert ours == pytest.approx(expected, abs=1e-9)
    assert ours == pytest.approx(
        krippendorff.alpha(np.where(present, confidence, np.nan).T, level_of_measurement="interval"), abs=1e-9
    )


def test_cross_mode_summary_on_real_data(choices) -> None:
    matrix, present, confidence = choices
    graded = agreement.cross_mode_agreement(agreement.signed_preference_likert(confidence, 9, present), present)
    binary = agreement.cross_mode_agreement(agreement.signed_preference_binary(matrix, present), present)
    # The same people's signs: nominal figures agree exactly across the two projections.
    assert graded["alpha_nominal"].value == pytest.approx(binary["alpha_nominal"].value)
    assert graded["pairwise_with_ties"].value == pytest.approx(binary["pairwise_with_ties"].value)
    for estimate in graded.values():
        assert estimate.ci is not None
        assert estimate.value is not None
        assert estimate.ci[0] <= estimate.value <= estimate.ci[1]
