"""The paper's PPI++ mean equals the reference implementation `ppi-python` on the same data, and the
inclusion-weighted form Penumbra reports keeps its promises: λ = 0 is the human-only Hájek estimate, the tuned λ
minimises the variance, and the PPI variance is never above the human-only one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from aggregation.maths import accuracy, ppi


def _labelled(seed: int, n: int = 150, big_n: int = 1500, quality: float = 0.8):
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < 0.6
    llm = np.where(rng.random(n + big_n) < quality, truth, ~truth).astype(float)
    return truth[:n].astype(float), llm[:n], llm[n:]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [None, 0.0, 0.5, 1.0])
def test_ppi_mean_equals_ppi_python(seed: int, lam: float | None) -> None:
    y, f_labelled, f_unlabelled = _labelled(seed, quality=0.6 + 0.05 * seed)
    value, ci, _ = ppi.ppi_mean(y, f_labelled, f_unlabelled, lam=lam, level=0.95)
    low, high = ppi_mean_ci(y, f_labelled, f_unlabelled, alpha=0.05, lam=lam)
    reference = ppi_mean_pointestimate(y, f_labelled, f_unlabelled, lam=lam)
    assert value == pytest.approx(float(np.squeeze(reference)), abs=1e-12)
    assert ci[0] == pytest.approx(float(np.squeeze(low)), abs=1e-10)
    assert ci[1] == pytest.approx(float(np.squeeze(high)), abs=1e-10)


def _design(seed: int, quality: float):
    rng = np.random.default_rng(seed)
    n_pop = 1200
    q = rng.beta(2, 2, n_pop)
    llm = (rng.random(n_pop) < np.where(rng.random(n_pop) < quality, q > 0.5, q <= 0.5)).astype(float)
    stratum = (rng.random(n_pop) < 0.4).astype(np.int64)
    rate = np.where(stratum == 1, 0.25, 0.08)
    sampled = rng.random(n_pop) < rate
    labels = rng.random((sampled.sum(), 3)) < q[sampled][:, None]
    y = labels.mean(axis=1)
    within = labels.var(axis=1, ddof=1) / 3
    return y, llm[sampled], llm, rate[sampled], stratum[sampled], within, labels


@pytest.mark.parametrize("seed", range(4))
def test_lambda_zero_is_the_human_only_hajek_estimate(seed: int) -> None:
    y, f_s, f_all, p, h, within, _labels = _design(seed, 0.8)
    est = ppi.ppi_design(y, f_s, f_all, p, within_variance=within, strata=h, lam=0.0)
    hajek = accuracy.hajek(y, p, strata=h, trials=np.full(y.size, 3.0))
    assert est.value == pytest.approx(hajek.value, abs=1e-12)
    assert est.human_value == pytest.approx(hajek.value, abs=1e-12)
    assert est.se == pytest.approx(est.human_se)
    # The same variance as the certification's (ultimate cluster, fpc, label noise added back): the within-item part
    # there is y(1 − y)/(m − 1) per item, which is labels.var(ddof=1)/m for 0/1 labels.
    assert est.human_se == pytest.approx(hajek.se, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_tuned_lambda_minimises_the_variance_in_zero_to_one(seed: int) -> None:
    y, f_s, f_all, p, h, within, _ = _design(seed, 0.85)
    tuned = ppi.ppi_design(y, f_s, f_all, p, within_variance=within, strata=h)
    grid = [
        ppi.ppi_design(y, f_s, f_all, p, within_variance=within, strata=h, lam=lam).se for lam in np.linspace(0, 1, 101)
    ]
    assert 0.0 <= tuned.lam <= 1.0
    assert tuned.se <= min(grid) + 1e-12
    assert tuned.effective_labels > tuned.labelled  # a good judge is worth extra labels


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), quality=st.floats(0.0, 1.0))
def test_ppi_is_never_less_precise_than_people_alone(seed: int, quality: float) -> None:
    y, f_s, f_all, p, h, within, _ = _design(seed, quality)
    est = ppi.ppi_design(y, f_s, f_all, p, within_variance=within, strata=h)
    assert est.se <= est.human_se + 1e-12
    assert est.ci[1] - est.ci[0] <= est.human_ci[1] - est.human_ci[0] + 1e-12
    assert est.effective_labels >= est.labelled - 1e-9


def test_a_constant_shift_in_the_llm_is_removed() -> None:
    # The LLM's figure is people's plus 0.3 everywhere: PPI with λ = 1 recovers people's mean exactly.
    y, _, _, p, h, _within, _ = _design(1, 0.8)
    rng = np.random.default_rng(5)
    f_all = rng.random(1200)
    f_s = rng.choice(f_all, y.size, replace=False)
    y = f_s - 0.3
    est = ppi.ppi_design(y, f_s, f_all, p, strata=h, lam=1.0)
    assert est.value == pytest.approx(f_all.mean() - 0.3, abs=1e-12)
    assert est.llm_value - est.value == pytest.approx(0.3, abs=1e-12)


def test_bad_input_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="inclusion probability"):
        ppi.ppi_design([0.1, 0.2], [0, 1], [0, 1, 1], [0.0, 0.5])
    with pytest.raises(ValueError, match="every item, the labelled ones included"):
        ppi.ppi_design([0.1, 0.2, 0.3], [0, 1, 1], [0, 1], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="at least two"):
        ppi.ppi_design([0.1], [0], [0, 1], [0.5])
