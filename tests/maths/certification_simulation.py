"""Simulated projects with a model of known accuracy, to check the certification estimators and decisions.

Each project has a population of N items the model would label. Item i has a stated confidence c_i (spread over
[0.5, 1]); the model is right with probability acc(c) rising from 0.55 to 0.98 with c, so calibration has a slope
to find. People label a two-way preference: on item i each person is right with probability q_i, one of a few
difficulty levels, shared by all labels of the item (the clustering the intervals must respect). A label agrees with
the model with probability a_i = q_i when the model is right, 1 − q_i otherwise. Gold exists on a random share of
items. The true figures are finite-population values over the N items: the model's accuracy against gold (the mean
of its 0/1 correctness over the items with gold), and its agreement with blind labels (the mean of a_i, the
per-item share's expectation; for the majority form, the chance that the item's labels' majority agrees).

Calibration and certification items are drawn by :func:`aggregation.maths.sampling.stratified_draw` (confidence bins,
equal allocation, so the weights vary 1/π across bins); each gets 1-4 blind labels. Verification answers are added
on some of the same items, given with the model's answer on screen (kept 97 % of the time when it is right, 60 %
when it is wrong): :func:`aggregation.maths.certification.evidence_mask` must drop them, and a bug that let them in
would push every estimate up. Audit runs are separate (:func:`audit_run`): the model labels a stream of items after
handoff, a Poisson sample of them is labelled blind, and the model's accuracy drops a third of the way through (or
never, or sits exactly at the threshold all along: the worst case for false suspensions).

Run ``.venv/bin/python -m tests.maths.certification_simulation [projects]`` (default 1,000) for the table of bias,
coverage and interval widths, and the audit figures. Each project's generator is seeded from (seed, project), so
any one project can be replayed alone.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from aggregation.maths import accuracy, certification, sampling


@dataclass(frozen=True)
class Scenario:
    n_projects: int = 1000
    population: int = 8000
    sample: int = 250  # calibration / certification items drawn (equal allocation over the bins)
    edges: tuple[float, ...] = sampling.DEFAULT_CONFIDENCE_EDGES
    labels: tuple[int, int] = (1, 4)  # blind labels per drawn item, uniform inclusive
    gold_rate: float = 0.5
    human_accuracy: tuple[float, ...] = (0.95, 0.85, 0.7)
    human_accuracy_p: tuple[float, ...] = (0.5, 0.3, 0.2)
    model_low: float = 0.55  # model accuracy at confidence 0.5
    model_high: float = 0.98  # at confidence 1
    cut: float = 0.8  # the confidence cut whose domain is estimated
    keep_right: float = 0.97  # verification: P(keep | model right)
    keep_wrong: float = 0.6
    verified_share: float = 0.5  # share of drawn items that also get a verification answer
    seed: int = 20261201


def model_accuracy(scenario: Scenario, confidence: np.ndarray) -> np.ndarray:
    x = np.clip((confidence - 0.5) / 0.5, 0.0, 1.0)
    return np.asarray(scenario.model_low + (scenario.model_high - scenario.model_low) * x)


def _majority_probability(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    """P(majority of m labels agrees with the model), each agreeing with probability a; half credit on a tie."""
    out = np.zeros_like(a)
    for size in np.unique(m):
        sel = m == size
        ks = np.arange(size + 1)
        comb = np.array([math.comb(int(size), int(k)) for k in ks], dtype=np.float64)
        pk = comb[None, :] * a[sel, None] ** ks[None, :] * (1 - a[sel, None]) ** (size - ks[None, :])
        credit = np.where(2 * ks > size, 1.0, np.where(2 * ks == size, 0.5, 0.0))
        out[sel] = pk @ credit
    return out


#: The lead's threshold for the lowest certifiable confidence in the simulation.
CUT_THRESHOLD = 0.78


@dataclass
class Run:
    truth: dict[str, float]
    estimates: dict[str, accuracy.DesignEstimate]
    bins: list[certification.BinEstimate]
    bin_truth: list[float]
    cut: certification.CutDecision
    verification: certification.VerificationRates
    keep_truth: float
    extra: dict[str, Any] = field(default_factory=dict)


def project_run(scenario: Scenario, index: int) -> Run:
    rng = np.random.default_rng([scenario.seed, index])
    n = scenario.population
    confidence = 0.5 + 0.5 * rng.beta(1.3, 1.0, size=n)
    right = rng.random(n) < model_accuracy(scenario, confidence)
    q = rng.choice(np.asarray(scenario.human_accuracy), size=n, p=np.asarray(scenario.human_accuracy_p))
    agree_p = np.where(right, q, 1.0 - q)
    has_gold = rng.random(n) < scenario.gold_rate
    m_all = rng.integers(scenario.labels[0], scenario.labels[1] + 1, size=n)
    keep_p = np.where(right, scenario.keep_right, scenario.keep_wrong)

    strata = sampling.confidence_strata(confidence, scenario.edges)
    draw = sampling.stratified_draw(draws=rng.random(n), strata=strata, total=scenario.sample, how="equal")
    drawn = np.flatnonzero(draw.drawn)
    k = drawn.size
    m = m_all[drawn]
    # Label-level rows: blind labels on the drawn items, then verification answers given with the model on screen.
    item = np.repeat(np.arange(k), m)
    agree = (rng.random(item.size) < agree_p[drawn][item]).astype(np.float64)
    verified = np.flatnonzero(rng.random(k) < scenario.verified_share)
    kept = (rng.random(verified.size) < keep_p[drawn][verified]).astype(np.float64)
    rows_item = np.concatenate([item, verified])
    rows_agree = np.concatenate([agree, kept])
    kinds = np.array(["certification"] * item.size + ["verification"] * verified.size, dtype=object)
    blind = np.concatenate([np.ones(item.size, bool), np.zeros(verified.size, bool)])

    use = certification.evidence_mask(kinds, blind)
    share, trials = accuracy.per_item_agreement(rows_item[use], rows_agree[use], k)
    labels = np.full((k, scenario.labels[1]), np.nan)
    labels[item, np.concatenate([np.arange(c) for c in m])] = agree
    majority = accuracy.majority_agreement(labels, np.ones(k))
    gold = np.where(has_gold[drawn], right[drawn].astype(np.float64), np.nan)
    p, h, conf = draw.probability[drawn], strata[drawn], confidence[drawn]
    above = conf >= scenario.cut

    estimates = {
        "blind_hajek": accuracy.hajek(share, p, strata=h, trials=trials),
        "blind_ht": accuracy.horvitz_thompson(share, p, strata=h, trials=trials, population_size=n),
        "majority_hajek": accuracy.hajek(majority, p, strata=h, trials=trials),
        "gold_hajek": accuracy.hajek(gold, p, strata=h),
        "gold_ht": accuracy.horvitz_thompson(gold, p, strata=h, population_size=float(has_gold.sum())),
        "above_cut_hajek": accuracy.hajek(np.where(above, share, np.nan), p, strata=h, trials=trials),
    }
    truth = {
        "blind_hajek": float(agree_p.mean()),
        "blind_ht": float(agree_p.mean()),
        "majority_hajek": float(_majority_probability(agree_p, m_all).mean()),
        "gold_hajek": float(right[has_gold].mean()),
        "gold_ht": float(right[has_gold].mean()),
        "above_cut_hajek": float(agree_p[confidence >= scenario.cut].mean()),
    }
    bins = certification.calibration_curve(share, p, conf, scenario.edges, strata=h, trials=trials)
    bin_truth = [float(agree_p[strata == b].mean()) for b in range(len(scenario.edges) - 1)]
    cut = certification.lowest_certifiable_confidence(
        share, p, conf, scenario.edges, threshold=CUT_THRESHOLD, strata=h, trials=trials
    )
    # Verification of a simple random sample of the population, one or two people per item.
    v_items = rng.choice(n, size=120, replace=False)
    v_rows = np.repeat(v_items, rng.integers(1, 3, size=v_items.size))
    v_kept = rng.random(v_rows.size) < keep_p[v_rows]
    rates = certification.verification_rates(v_kept, v_rows)
    leaked = accuracy.per_item_agreement(rows_item, rows_agree, k)[0]
    return Run(
        truth=truth,
        estimates=estimates,
        bins=bins,
        bin_truth=bin_truth,
        cut=cut,
        verification=rates,
        keep_truth=float(keep_p.mean()),
        extra={
            "leaked_blind_hajek": accuracy.hajek(leaked, p, strata=h).value,
            "cut_truth": math.inf if cut.cut is None else float(agree_p[confidence >= cut.cut].mean()),
        },
    )


def _covers(ci: tuple[float, float] | None, truth: float) -> bool:
    return ci is not None and ci[0] <= truth <= ci[1]


def summarise(scenario: Scenario) -> dict[str, dict[str, float]]:
    """Per figure over the scenario's projects: mean truth, mean estimate, bias with its Monte-Carlo standard error,
    coverage of the 95 % interval and mean width."""
    rows: dict[str, list[tuple[float, float, tuple[float, float] | None]]] = {}
    wrong_cut: list[bool] = []
    for index in range(scenario.n_projects):
        run = project_run(scenario, index)
        for name, est in run.estimates.items():
            rows.setdefault(name, []).append((run.truth[name], float(est.value or math.nan), est.ci))
        for b, (bin_est, truth) in enumerate(zip(run.bins, run.bin_truth, strict=True)):
            rows.setdefault(f"bin_{b}", []).append(
                (truth, float(bin_est.estimate.value or math.nan), bin_est.estimate.ci)
            )
        rows.setdefault("keep_rate", []).append(
            (run.keep_truth, float(run.verification.keep or 0.0), run.verification.keep_ci)
        )
        # A certified cut is wrong when the labels above it truly fall short of the threshold.
        wrong_cut.append(run.extra["cut_truth"] < CUT_THRESHOLD)
    table: dict[str, dict[str, float]] = {}
    for name, values in rows.items():
        truths = np.array([v[0] for v in values])
        estimated = np.array([v[1] for v in values])
        error = estimated - truths
        table[name] = {
            "truth": float(truths.mean()),
            "estimate": float(np.nanmean(estimated)),
            "bias": float(np.nanmean(error)),
            "bias_se": float(np.nanstd(error) / math.sqrt(max(np.isfinite(error).sum(), 1))),
            "coverage": float(np.mean([_covers(v[2], v[0]) for v in values])),
            "width": float(np.mean([v[2][1] - v[2][0] for v in values if v[2] is not None])),
        }
    table["wrong_cut"] = {"rate": float(np.mean(wrong_cut))}
    return table


@dataclass(frozen=True)
class AuditScenario:
    n_projects: int = 1000
    stream: int = 9000  # items labelled by the model after handoff, in order
    rate: float = 0.05  # audit sampling rate
    drop_at: int | None = 3000  # item at which the model's accuracy drops (None: never)
    accuracy_before: float = 0.96
    accuracy_after: float = 0.6  # agreement with the people 0.59 against the threshold 0.75
    human_accuracy: float = 0.95
    threshold: float = 0.75
    minimum: int = 100
    window: int | None = 100
    level: float = 0.95
    seed: int = 7


def audit_run(scenario: AuditScenario, index: int) -> int | None:
    """The stream position of the item whose audit answer first suspends the handoff, or None if it never does."""
    rng = np.random.default_rng([scenario.seed, index])
    n = scenario.stream
    position = np.arange(n)
    drop = np.inf if scenario.drop_at is None else scenario.drop_at
    right = rng.random(n) < np.where(position < drop, scenario.accuracy_before, scenario.accuracy_after)
    draw = sampling.poisson_draw(draws=rng.random(n), rate=scenario.rate)
    audited = np.flatnonzero(draw.drawn)
    agree_p = np.where(right[audited], scenario.human_accuracy, 1.0 - scenario.human_accuracy)
    values = (rng.random(audited.size) < agree_p).astype(np.float64)
    probability = draw.probability[audited]
    if audited.size < scenario.minimum:
        return None
    # The stakes use earlier answers only, so one pass gives the verdict audit_check would give at every look: the
    # first look with ``minimum`` answers at which the wealth has reached 1/α.
    wealth = certification.audit_wealth(values, threshold=scenario.threshold)
    crossed = np.flatnonzero(wealth >= 1.0 / (1.0 - scenario.level))
    if crossed.size == 0:
        return None
    j = max(int(crossed[0]) + 1, scenario.minimum)
    status = certification.audit_check(
        values[:j], probability[:j], threshold=scenario.threshold, minimum=scenario.minimum, window=scenario.window
    )
    assert status.state == "suspend"
    return int(audited[j - 1])


def audit_summary(scenario: AuditScenario) -> dict[str, float]:
    """Share of runs suspended, suspended before the drop (false alarms), and the median delay after the drop."""
    positions = [audit_run(scenario, i) for i in range(scenario.n_projects)]
    hit = [p for p in positions if p is not None]
    drop = scenario.drop_at
    before = [p for p in hit if drop is None or p < drop]
    after = [p - drop for p in hit if drop is not None and p >= drop]
    return {
        "suspended": len(hit) / scenario.n_projects,
        "suspended_before_drop": len(before) / scenario.n_projects,
        "median_delay_items": float(np.median(after)) if after else math.nan,
    }


def at_the_threshold(scenario: AuditScenario) -> AuditScenario:
    """No drop, with the model's accuracy set so that its agreement with the people equals the threshold: H0 at its
    edge, where a valid sequential test suspends at most 5 % of audits."""
    q = scenario.human_accuracy
    accuracy = (scenario.threshold - (1.0 - q)) / (2.0 * q - 1.0)
    return replace(scenario, drop_at=None, accuracy_before=accuracy)


def verification_only_certifies_nothing(scenario: Scenario, index: int) -> certification.Decision:
    """A project whose only answers are verification answers: whatever they say, nothing is certified."""
    rng = np.random.default_rng([scenario.seed, index])
    k = 100
    rows = np.repeat(np.arange(k), 3)
    kinds = np.array(["verification"] * rows.size, dtype=object)
    use = certification.evidence_mask(kinds, rng.random(rows.size) < 0.5)
    share, trials = accuracy.per_item_agreement(rows[use], np.ones(int(use.sum())), k)
    estimate = accuracy.hajek(share, np.full(k, 0.1), trials=trials)
    return certification.certification_decision(estimate, threshold=0.5)


def main() -> None:
    n_projects = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    scenario = replace(Scenario(), n_projects=n_projects)
    print(f"certification: {n_projects} projects of {scenario.population} items, {scenario.sample} drawn")
    table = summarise(scenario)
    wrong = table.pop("wrong_cut")["rate"]
    for name, row in table.items():
        print(
            f"  {name:16s} truth {row['truth']:.4f}  estimate {row['estimate']:.4f}"
            f"  bias {row['bias']:+.4f} (se {row['bias_se']:.4f})  coverage {row['coverage']:.3f}"
            f"  mean width {row['width']:.3f}"
        )
    print(f"  certified confidence cut whose labels truly fall short of {CUT_THRESHOLD}: {wrong:.3f} of projects")
    base = AuditScenario(n_projects=n_projects)
    for label, audit in (
        (f"audit, accuracy drops to {base.accuracy_after}", base),
        ("audit, accuracy drops to 0.65", replace(base, accuracy_after=0.65)),
        ("audit, accuracy drops to 0.75", replace(base, accuracy_after=0.75)),
        ("audit, no drop", replace(base, drop_at=None)),
        ("audit, agreement at the threshold all along", at_the_threshold(base)),
    ):
        row = audit_summary(audit)
        print(
            f"{label}: suspended {row['suspended']:.3f}, before the drop {row['suspended_before_drop']:.3f},"
            f" median delay {row['median_delay_items']:.0f} items"
        )


if __name__ == "__main__":
    main()
