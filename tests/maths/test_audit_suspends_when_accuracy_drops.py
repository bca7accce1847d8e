"""Audit after handoff: when the model's accuracy drops half way through the stream of items it labels, the running
lower bound on a continuing random sample falls below the threshold and the handoff is suspended; when it does
not drop, suspensions are rare (tests/maths/certification_simulation.py, AuditScenario)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.maths.certification_simulation import AuditScenario, audit_summary

N_PROJECTS = 300

pytestmark = [pytest.mark.slow]


def test_a_drop_in_accuracy_suspends_the_handoff_soon_after() -> None:
    row = audit_summary(dataclasses.replace(AuditScenario(), n_projects=N_PROJECTS))
    assert row["suspended"] >= 0.99
    assert row["suspended_before_drop"] <= 0.06
    # 5 % of items are audited: suspended within about 60 audit answers of the drop.
    assert row["median_delay_items"] <= 1200


def test_without_a_drop_the_audit_rarely_suspends() -> None:
    row = audit_summary(dataclasses.replace(AuditScenario(), n_projects=N_PROJECTS, drop_at=None))
    assert row["suspended"] <= 0.12
