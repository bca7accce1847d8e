"""The contracts beside the handoff threshold: what each lets a lead sign, from the project's blind labels.

The maths is in aggregation.maths (selective_risk, alt_test, distributional, label_budget); this module loads the
evidence and states each contract's verdict ("holds", "fails", "withheld" with the reason, or "forecast"), its
sentence and its n. docs/guides/contracts.md explains each for leads.

* **Selective risk** (Learn-then-Test over confidence thresholds): the blind answers to the latest certification
  draw, else to the latest calibration draw (the same evidence certification uses: answered blind, with a recorded
  inclusion probability). Per item the loss is the share of its blind answers that differ from the model's answer at
  the draw. The target is 1 − the handoff threshold: the same bar as every other decision to let the model label.
  The contract checks that each tested cell's sample is uniform (equal inclusion probabilities) and large enough.
* **No worse than human** (the alternative annotator test): the overlap that already exists, items labelled by two
  or more people without the model's answer on screen, against the model's suggestion.
* **Distributional** (IFS projects): each blind person's (μ, ν) per response, the criteria weighted as the project
  weighs them, against the model's (μ, ν); the ceiling from split halves of the people.
* **Budget first**: the forecast from the calibration bins' Hájek accuracy and estimated sizes, for a budget of
  labels (by default twice the blind answers so far; the API takes any budget, or money and a reward per label).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from aggregation.maths import alt_test, certification, distributional, label_budget, selective_risk
from annotation.models import JudgmentValue, LabelRequest
from projects.models import PERMILLE, Project, Suggestion, SuggestionValue
from suggestions.figures import comparisons_load

#: The alternative annotator test's cost-benefit margin: the paper's value for crowd workers.
ALT_TEST_EPSILON = 0.2
#: How much farther than the human noise ceiling the model's (μ, ν) may be.
DISTRIBUTIONAL_MARGIN = 0.05
DELTA = 0.05


def _selective_evidence(rows: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """The blind answers of the latest certification draw, else of the latest calibration draw."""
    if not rows:
        return None, []
    blind = certification.evidence_mask([r["kind"] for r in rows], [not r["shown"] for r in rows])
    usable = [r for r, ok in zip(rows, blind, strict=True) if ok]
    for kind in (LabelRequest.Kind.CERTIFICATION, LabelRequest.Kind.CALIBRATION):
        draws = [r["draw"] for r in usable if r["kind"] == kind]
        if draws:
            latest = max(draws)
            return str(kind), [r for r in usable if r["kind"] == kind and r["draw"] == latest]
    return None, []


def selective_risk_figure(rows: list[dict[str, Any]], *, target: float) -> dict[str, Any]:
    kind, evidence = _selective_evidence(rows)
    if not evidence:
        return {"contract": "selective_risk", "verdict": "withheld", "reason": "no blind answers to a certification "
                "or calibration draw yet", "sentence": "", "n": 0}  # fmt: skip
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in evidence:
        # A request without a recorded inclusion probability says nothing about the population it was drawn from.
        if row["inclusion_probability"] and 0 < row["inclusion_probability"] <= 1:
            grouped[row["item_id"]].append(row)
    items = list(grouped.values())
    if not items:
        return {"contract": "selective_risk", "verdict": "withheld", "reason": "no blind answer has a recorded "
                "inclusion probability", "sentence": "", "n": 0}  # fmt: skip
    loss = [np.mean([r["final_preferred"] != r["machine_preferred"] for r in answers]) for answers in items]
    confidence = [np.nan if a[0]["confidence"] is None else a[0]["confidence"] for a in items]
    probability = [a[0]["inclusion_probability"] for a in items]
    est = selective_risk.selective_risk(loss, confidence, probability, target=target, delta=DELTA)
    return {**est.as_dict(), "draw_kind": kind}


def _blind_label_matrix(project: Project) -> tuple[np.ndarray, np.ndarray]:
    """(items, annotators) of blind preferred positions (NaN: none) and the model's position per item."""
    comparisons = comparisons_load(project=project)
    blind = ~comparisons.shown
    items, item_index = np.unique(comparisons.item_ids[blind], return_inverse=True)
    people, person_index = np.unique(comparisons.annotator_ids[blind], return_inverse=True)
    labels = np.full((items.size, people.size), np.nan)
    labels[item_index, person_index] = comparisons.human[blind]
    model = np.full(items.size, np.nan)
    model[item_index] = comparisons.llm[blind]
    return labels, model


def no_worse_than_human_figure(project: Project) -> dict[str, Any]:
    labels, model = _blind_label_matrix(project)
    return alt_test.alt_test(labels, model, epsilon=ALT_TEST_EPSILON, alpha=DELTA).as_dict()


def _people_values(project: Project, item_ids: list[int], width: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(items, people, responses) arrays of each blind person's criterion-weighted μ and ν (NaN where a person
    did not value every criterion of a response)."""
    weights = dict(project.criteria.values_list("id", "weight"))
    total = sum(weights.values()) or 1.0
    rows = list(
        JudgmentValue.objects.filter(
            annotation__project=project,
            annotation__suggestion_shown=False,
            annotation__item__suggestion__status=Suggestion.Status.OK,
        )
        .values_list(
            "annotation__item_id", "annotation__annotator_id", "response__position", "criterion_id", "mu", "nu"
        )
        .order_by()
    )
    people = sorted({r[1] for r in rows})
    item_of = {i: k for k, i in enumerate(item_ids)}
    person_of = {p: k for k, p in enumerate(people)}
    mu = np.zeros((len(item_ids), len(people), width))
    nu = np.zeros_like(mu)
    seen = np.zeros_like(mu)
    for item_id, person, position, criterion, m, n in rows:
        if position >= width or item_id not in item_of:
            continue
        w = weights.get(criterion, 0.0) / total
        at = (item_of[item_id], person_of[person], position)
        mu[at] += w * m / PERMILLE
        nu[at] += w * n / PERMILLE
        seen[at] += w
    full = seen > 1 - 1e-6  # every criterion valued
    return np.where(full, mu, np.nan), np.where(full, nu, np.nan), people


def distributional_figure(project: Project) -> dict[str, Any]:
    if project.mode != Project.Mode.IFS:
        return {"contract": "distributional", "verdict": "withheld", "reason": "only IFS projects keep people's "
                "(μ, ν) to compare with", "sentence": "", "n": 0}  # fmt: skip
    values = list(
        SuggestionValue.objects.filter(
            suggestion__item__project=project, suggestion__status=Suggestion.Status.OK
        ).values_list("suggestion__item_id", "response__position", "mu", "nu")
    )
    item_ids = sorted({v[0] for v in values})
    width = max((v[1] for v in values), default=1) + 1
    model_mu = np.full((len(item_ids), width), np.nan)
    model_nu = np.full_like(model_mu, np.nan)
    item_of = {i: k for k, i in enumerate(item_ids)}
    for item_id, position, m, n in values:
        model_mu[item_of[item_id], position] = m / PERMILLE
        model_nu[item_of[item_id], position] = n / PERMILLE
    people_mu, people_nu, _ = _people_values(project, item_ids, width)
    est = distributional.distributional(
        people_mu, people_nu, model_mu, model_nu, margin=DISTRIBUTIONAL_MARGIN, seed=project.pk
    )
    return est.as_dict()


def budget_figure(
    calibration_bins: list[dict[str, Any]],
    *,
    budget_labels: int | None = None,
    money: float | None = None,
    reward_per_label: float | None = None,
    labels_per_item: float = 1.0,
) -> dict[str, Any]:
    """The forecast from the calibration bins' Hájek accuracy (its ``value``) and estimated size (``population``)."""
    usable = [b for b in calibration_bins if b.get("value") is not None and (b.get("population") or 0) > 0]
    if len(usable) < 1:
        return {"contract": "budget_first", "verdict": "withheld", "reason": "no calibration bin with blind answers "
                "yet: the forecast needs the model's error by confidence", "sentence": "", "n": 0}  # fmt: skip
    usable.sort(key=lambda b: b["low"])
    share = [b["population"] for b in usable]
    error = [1.0 - b["value"] for b in usable]
    plan = label_budget.budget_plan(
        share, error, budget_labels=budget_labels, money=money, reward_per_label=reward_per_label,
        labels_per_item=max(labels_per_item, 1.0), delta=DELTA,
    )  # fmt: skip
    return plan.as_dict()


def contracts_figures(*, project: Project, rows: list[dict[str, Any]], calibration: dict[str, Any]) -> dict[str, Any]:
    """Every contract's verdict, sentence and n (module docstring), for ``labeling_figures``."""
    target = round(1.0 - float(project.handoff_agreement_threshold), 6)
    answers = int(calibration.get("answers") or 0)
    bins: list[dict[str, Any]] = list(calibration.get("bins") or [])
    per_item = answers / max(sum(int(b.get("items") or 0) for b in bins), 1) if answers else 1.0
    return {
        "selective_risk": selective_risk_figure(rows, target=target) if target > 0 else _no_target(),
        "no_worse_than_human": no_worse_than_human_figure(project),
        "distributional": distributional_figure(project),
        "budget_first": budget_figure(bins, budget_labels=max(2 * answers, 100), labels_per_item=per_item),
    }


def _no_target() -> dict[str, Any]:
    return {"contract": "selective_risk", "verdict": "withheld", "reason": "the handoff threshold is 1: no error "
            "can be certified below 0", "sentence": "", "n": 0}  # fmt: skip


__all__ = ["budget_figure", "contracts_figures"]
