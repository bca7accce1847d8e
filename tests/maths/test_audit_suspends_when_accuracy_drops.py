"""Audit after handoff, a sequential test by betting (aggregation.maths.certification): when the model's accuracy drops
a
third of the way through the stream of items it labels, the handoff is suspended soon after; when it does not drop,
or when the model's agreement sits exactly at the threshold all along (the edge of "no drop below the threshold"),
at most 5 % of audits are suspended over their whole length, however many times they are looked at
(tests/maths/certification_simulation.py, AuditScenario)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.maths.certification_simulation import AuditScenario, at_the_threshold, audit_summary

N_PROJECTS = 1000

pytestmark = [pytest.mark.slow]


def test_a_drop_in_accuracy_suspends_the_handoff_soon_after() -> None:
    row = audit_summary(dataclasses.replace(AuditScenario(), n_projects=N_PROJECTS))
    assert row["suspended"] >= 0.98
    assert row["suspended_before_drop"] <= 0.05
    # 5 % of items are audited: suspended within about 100 audit answers of the drop.
    assert row["median_delay_items"] <= 2000


def test_without_a_drop_the_audit_suspends_at_most_5_percent_of_the_time() -> None:
    row = audit_summary(dataclasses.replace(AuditScenario(), n_projects=N_PROJECTS, drop_at=None))
    assert row["suspended"] <= 0.05


def test_at_the_threshold_all_along_the_audit_suspends_at_most_5_percent_of_the_time() -> None:
    row = audit_summary(at_the_threshold(dataclasses.replace(AuditScenario(), n_projects=N_PROJECTS)))
    assert row["suspended"] <= 0.05
