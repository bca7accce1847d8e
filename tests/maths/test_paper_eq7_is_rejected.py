"""The paper's Eq. (7) is not an IFS aggregation operator; ifwa must stay Xu's IFWA.

Eq. (7) as printed: μ = Π(1−μᵢ)^wᵢ, ν = 1 − Π(1−νᵢ)^wᵢ. It is implemented here, inside the test only, to show
why: it is not idempotent (one annotator (μ, ν) comes out as (1−μ, ν)) and can leave the IFS domain. If someone
"fixes" ifwa back to it, the last tests fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import ifs


def paper_eq7(mu: np.ndarray, nu: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    w = w / w.sum()
    return float(np.prod((1.0 - mu) ** w)), float(1.0 - np.prod((1.0 - nu) ** w))


def test_eq7_is_not_idempotent() -> None:
    mu, nu = paper_eq7(np.array([0.7]), np.array([0.2]), np.array([1.0]))
    assert (mu, nu) == pytest.approx((0.3, 0.2))  # (1 − μ, ν), not (μ, ν)
    agreeing = paper_eq7(np.array([0.7, 0.7, 0.7]), np.array([0.2, 0.2, 0.2]), np.ones(3))
    assert agreeing[0] != pytest.approx(0.7)


def test_eq7_leaves_the_ifs_domain() -> None:
    mu, nu = paper_eq7(np.array([0.1, 0.05]), np.array([0.8, 0.9]), np.array([0.5, 0.5]))
    assert mu + nu > 1.0


@settings(max_examples=100, deadline=None)
@given(
    mu=st.floats(min_value=0.0, max_value=0.45),
    nu=st.floats(min_value=0.55, max_value=1.0),
)
def test_eq7_breaks_validity_whenever_opposition_exceeds_support(mu: float, nu: float) -> None:
    nu = min(nu, 1.0 - mu)
    out_mu, out_nu = paper_eq7(np.array([mu]), np.array([nu]), np.array([1.0]))
    # One annotator comes out as (1 − μ, ν), whose sum exceeds 1 exactly when ν > μ.
    assert out_mu + out_nu > 1.0
    ours = ifs.ifwa(np.array([mu]), np.array([nu]))
    assert float(ours.mu) + float(ours.nu) <= 1.0 + 1e-9


def test_ifwa_is_xu_2007_not_eq7() -> None:
    mu = np.array([0.1, 0.05])
    nu = np.array([0.8, 0.9])
    w = np.array([0.5, 0.5])
    out = ifs.ifwa(mu, nu, w)
    assert float(out.mu) == pytest.approx(1.0 - np.sqrt(0.9 * 0.95))
    assert float(out.nu) == pytest.approx(np.sqrt(0.8 * 0.9))
    assert float(out.mu) + float(out.nu) <= 1.0
    assert (float(out.mu), float(out.nu)) != pytest.approx(paper_eq7(mu, nu, w))


def test_ifwa_of_one_annotator_is_that_annotator() -> None:
    out = ifs.ifwa(np.array([0.7]), np.array([0.2]))
    assert (float(out.mu), float(out.nu)) == pytest.approx((0.7, 0.2), abs=1e-12)
