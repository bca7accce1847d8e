"""Properties of the contracts' maths against plain definitions: the Hoeffding-Bentkus p-value, fixed-sequence
testing, Benjamini-Yekutieli, the alternative annotator test's advantage probabilities, the split-half ceiling and
the budget forecast."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.maths import alt_test, distributional, label_budget, selective_risk
from aggregation.maths.intervals import t_quantile, t_upper_tail


@settings(max_examples=60, deadline=None)
@given(risk=st.floats(0, 1), n=st.integers(1, 400), alpha=st.floats(0.01, 0.5))
def test_hoeffding_bentkus_is_the_smaller_of_its_two_bounds(risk: float, n: int, alpha: float) -> None:
    p = selective_risk.hoeffding_bentkus_p(risk, n, alpha)
    a = min(risk, alpha)
    kl = (a * math.log(a / alpha) if a > 0 else 0.0) + ((1 - a) * math.log((1 - a) / (1 - alpha)) if a < 1 else 0.0)
    k = math.ceil(n * risk - 1e-9)
    binom = sum(math.comb(n, j) * alpha**j * (1 - alpha) ** (n - j) for j in range(min(k, n) + 1))
    assert p == pytest.approx(min(1.0, math.exp(-n * kl), math.e * binom), rel=1e-6, abs=1e-12)
    if risk >= alpha:
        assert p >= min(1.0, math.e * 0.3)  # an observed risk at the target is no evidence below it


@settings(max_examples=40, deadline=None)
@given(risk=st.floats(0, 0.09), alpha=st.floats(0.1, 0.3))
def test_items_to_pass_is_the_first_size_that_passes(risk: float, alpha: float) -> None:
    n = selective_risk.items_to_pass(risk, alpha, 0.05)
    assert selective_risk.hoeffding_bentkus_p(risk, n, alpha) <= 0.05
    assert n == 1 or selective_risk.hoeffding_bentkus_p(risk, n - 1, alpha) > 0.05


def test_fixed_sequence_stops_at_the_first_cell_it_cannot_reject() -> None:
    conf = np.repeat([0.95, 0.85, 0.75, 0.65], 200)
    loss = np.concatenate([np.zeros(200), np.zeros(200), np.ones(200), np.zeros(200)])
    est = selective_risk.selective_risk(
        loss, conf, np.full(conf.size, 0.5), target=0.1, thresholds=[0.95, 0.85, 0.75, 0.65]
    )
    assert est.verdict == "holds"
    assert est.threshold == pytest.approx(0.85)  # 0.75's cell has risk 1/3; 0.65 below it is never reached
    assert [c.rejected for c in est.cells] == [True, True, False]
    assert est.share == pytest.approx(0.5)


def test_a_sample_that_is_not_uniform_in_the_cell_is_withheld_with_the_reason() -> None:
    conf = np.repeat([0.95, 0.55], 200)
    probability = np.repeat([0.5, 0.1], 200)
    est = selective_risk.selective_risk(np.zeros(400), conf, probability, target=0.1, thresholds=[0.5])
    assert est.verdict == "withheld"
    assert "not a uniform sample" in est.reason
    assert selective_risk.selective_risk(np.zeros(10), np.full(10, 0.9), np.ones(10), target=0.1).verdict == (
        "withheld"
    )


@settings(max_examples=60, deadline=None)
@given(p=st.lists(st.floats(0, 1), min_size=1, max_size=30), alpha=st.floats(0.01, 0.2))
def test_benjamini_yekutieli_equals_its_definition(p: list[float], alpha: float) -> None:
    m = len(p)
    c = sum(1 / i for i in range(1, m + 1))
    ranked = sorted(p)
    k = max((i for i in range(1, m + 1) if ranked[i - 1] <= alpha * i / (m * c)), default=0)
    expected = [x <= ranked[k - 1] if k else False for x in p]
    assert alt_test.benjamini_yekutieli(p, alpha).tolist() == expected


def test_t_upper_tail_inverts_the_quantile() -> None:
    for df in (1, 2, 5, 29, 120):
        t = t_quantile(0.90, df)
        assert t_upper_tail(t, df) == pytest.approx(0.05, abs=1e-9)
        assert t_upper_tail(-t, df) == pytest.approx(0.95, abs=1e-9)


def test_alt_test_advantage_probabilities_equal_a_loop() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, (60, 4)).astype(float)
    labels[rng.random((60, 4)) < 0.3] = np.nan
    model = rng.integers(0, 3, 60).astype(float)
    est = alt_test.alt_test(labels, model, min_items=1, min_annotators=1)
    for result in est.annotators:
        j = result.annotator
        wf, wh = [], []
        for i in range(60):
            others = [labels[i, k] for k in range(4) if k != j and not np.isnan(labels[i, k])]
            if np.isnan(labels[i, j]) or not others:
                continue
            s_f = np.mean([o == model[i] for o in others])
            s_h = np.mean([o == labels[i, j] for o in others])
            wf.append(s_f >= s_h)
            wh.append(s_h >= s_f)
        assert result.items == len(wf)
        assert result.rho_model == pytest.approx(np.mean(wf))
        assert result.rho_person == pytest.approx(np.mean(wh))
    short = alt_test.alt_test(labels[:25], model[:25])
    assert short.verdict == "withheld"
    assert "needs 3" in short.reason


def test_split_halves_of_identical_people_put_the_ceiling_at_zero() -> None:
    mu = np.tile([[0.6, 0.2]], (40, 4, 1))
    nu = np.tile([[0.1, 0.5]], (40, 4, 1))
    est = distributional.distributional(mu, nu, mu[:, 0] + 0.1, nu[:, 0], margin=0.05)
    assert est.ceiling == pytest.approx(0.0)
    assert est.model_distance == pytest.approx(0.1)  # √(½(0.1² + 0 + 0.1²)) per response
    assert est.verdict == "fails"
    few = distributional.distributional(mu[:10], nu[:10], mu[:10, 0], nu[:10, 0])
    assert few.verdict == "withheld"


@settings(max_examples=40, deadline=None)
@given(
    errors=st.lists(st.floats(0, 0.5), min_size=2, max_size=6),
    budget=st.integers(0, 5000),
    target=st.sampled_from([0.05, 0.1, 0.2]),
)
def test_budget_forecast_grows_with_the_budget_and_meets_its_own_needs(
    errors: list[float], budget: int, target: float
) -> None:
    share = np.full(len(errors), 1.0 / len(errors))
    small = label_budget.certifiable_share(share, errors, budget, target)
    large = label_budget.certifiable_share(share, errors, budget * 2 + 10, target)
    assert large >= small - 1e-12
    widest, needed = label_budget.labels_needed(share, errors, target)
    if needed is not None:
        assert label_budget.certifiable_share(share, errors, needed, target) >= widest - 1e-9
    plan = label_budget.budget_plan(share, errors, money=budget * 0.05, reward_per_label=0.05)
    assert plan.budget_labels == budget
