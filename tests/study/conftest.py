"""Repeats, adaptive overlap and position bias on real projects (the simulations are in tests/maths)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _aggregation_in_process(settings):
    # The embedded background thread would outlive the test transaction; run the work in-process instead.
    settings.AGGREGATION_IN_THREAD = False
