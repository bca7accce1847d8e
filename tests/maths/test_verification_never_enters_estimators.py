"""Verification answers (given with the model's answer on screen) measure acceptance, never accuracy: they never
enter the accuracy estimators, and a project with only verification answers certifies nothing."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import accuracy, certification
from tests.maths.certification_simulation import Scenario, project_run, verification_only_certifies_nothing


def test_evidence_is_blind_labels_of_drawn_requests_only() -> None:
    kinds = np.array(["calibration", "certification", "audit", "verification", "verification", "audit"], dtype=object)
    blind = np.array([True, True, True, True, False, False])
    assert certification.evidence_mask(kinds, blind).tolist() == [True, True, True, False, False, False]
    with pytest.raises(ValueError, match="unknown request kinds"):
        certification.evidence_mask(np.array(["guess"], dtype=object), np.array([True]))


def test_verification_answers_change_no_estimate() -> None:
    scenario = Scenario(n_projects=1)
    run = project_run(scenario, 0)
    flipped = project_run(Scenario(n_projects=1, keep_right=0.0, keep_wrong=0.0), 0)
    # Same project, opposite verification answers: the same estimates, to the last digit.
    for name, estimate in run.estimates.items():
        assert flipped.estimates[name] == estimate, name
    # And they would have mattered: letting them in moves the estimate (anchored answers keep the model's label).
    leaked = run.extra["leaked_blind_hajek"]
    assert leaked is not None
    assert run.estimates["blind_hajek"].value is not None
    assert leaked > run.estimates["blind_hajek"].value + 0.01


@pytest.mark.parametrize("index", range(5))
def test_a_verification_only_project_certifies_nothing(index: int) -> None:
    decision = verification_only_certifies_nothing(Scenario(), index)
    assert not decision.certified
    assert decision.estimate.value is None
    assert "no blind evidence" in decision.reason


def test_blind_verification_is_still_not_drawn_evidence() -> None:
    rows = np.arange(30)
    use = certification.evidence_mask(np.array(["verification"] * 30, dtype=object), np.ones(30, dtype=bool))
    share, trials = accuracy.per_item_agreement(rows[use], np.ones(int(use.sum())), 30)
    assert np.isnan(share).all()
    assert trials.sum() == 0
