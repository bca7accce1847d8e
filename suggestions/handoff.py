"""Handing the remaining items to the LLM, on evidence that the suggestion did not anchor: blind agreement only,
the design-based estimate over the fixed random blind sample (suggestions.figures), never the pooled unaided labels.

Rules (Project.handoff_rule), both needing at least ``handoff_minimum_blind_comparisons`` blind comparisons:
- ``point``: blind agreement ≥ ``handoff_agreement_threshold``;
- ``lower_bound`` (stricter): the lower end of its 95 % interval ≥ the threshold. The interval is over items (the
  clustered Wilson interval of aggregation.maths.intervals), so several labels of one item count as the evidence they
  are, not as independent draws.

Every item still short of its overlap stops being served. One without any human label gets an ItemAggregate with
provenance ``model_handoff`` built from its suggestion: from the suggestion's (μ, ν) per response when it has them,
else from the documented defaults below. A partly labelled item keeps its human aggregate (human labels always win).
Undo deletes exactly the ``model_handoff`` aggregates, and the annotation queue serves items again (it only serves
projects that are collecting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from aggregation.figures.items import ItemFigures, item_figures_compute
from aggregation.figures.judgments import Judgments

# The item-figures function, wherever aggregation keeps it: handoff aggregates use its definitions.
from aggregation.figures.settings import FigureSettings
from aggregation.maths.agreement import Estimate
from aggregation.maths.comparisons import handoff_decision
from aggregation.maths.ifs import UNDEFINED
from aggregation.models import ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from config import events
from projects.models import PERMILLE, TIE, Item, Project, Response, Suggestion
from suggestions.certification import labeling_figures
from suggestions.figures import blind_agreement_figure, comparisons_load
from suggestions.models import HandoffDecision

# A suggestion without (μ, ν) states a preference but no uncertainty. Handed-off aggregates then use these values
# (floats in [0, 1]): the preferred response (μ, ν) = (0.75, 0.05), every other (0.05, 0.75), a tie (0.4, 0.4).
# Hesitation π = 0.2 everywhere: a bare model label is not treated as certain, and p(best ≻ worst) = 0.85.
DEFAULT_PREFERRED = (0.75, 0.05)
DEFAULT_OTHER = (0.05, 0.75)
DEFAULT_TIE = (0.4, 0.4)


HANDOFF_BASES = ("blind_agreement", "certification")


def _rule_text(project: Project) -> str:
    if project.handoff_rule == Project.HandoffRule.LOWER_BOUND:
        return f"lower 95 % bound of blind agreement ≥ {project.handoff_agreement_threshold:.0%}"
    return f"blind agreement ≥ {project.handoff_agreement_threshold:.0%}"


def handoff_evaluation(*, project: Project, blind: dict[str, Any]) -> dict[str, Any]:
    """Whether the project may hand off, from the blind agreement figure {"value", "n", "ci"}, with the reason."""
    ci = blind.get("ci")
    estimate = Estimate(value=blind.get("value"), n=int(blind.get("n") or 0), ci=(ci[0], ci[1]) if ci else None)
    decision = handoff_decision(
        estimate,
        threshold=project.handoff_agreement_threshold,
        minimum=project.handoff_minimum_blind_comparisons,
        rule="lower_bound" if project.handoff_rule == Project.HandoffRule.LOWER_BOUND else "point",
    )
    lower_bound_rule = project.handoff_rule == Project.HandoffRule.LOWER_BOUND
    return {
        "eligible": decision.eligible,
        "rule": project.handoff_rule,
        "rule_text": _rule_text(project),
        "fired": "minimum_blind_comparisons" if decision.more_needed else project.handoff_rule,
        "threshold": decision.threshold,
        "minimum": decision.minimum,
        "more_needed": decision.more_needed,
        "trigger": project.handoff_trigger,
        "blind": estimate.as_dict(),
        "measured": (ci[0] if ci else None) if lower_bound_rule else estimate.value,
        "explanation": f"{'Eligible' if decision.eligible else 'Not eligible'}: {decision.reason}.",
        "phase": project.phase,
        "evaluated_at": timezone.now().isoformat(),
    }


def _fresh_evaluation(project: Project) -> dict[str, Any]:
    # The design-based figure over the random blind sample, as the stored one: never the pooled unaided labels.
    return handoff_evaluation(project=project, blind=blind_agreement_figure(comparisons_load(project=project)))


def _store_evaluation(project: Project, evaluation: dict[str, Any]) -> None:
    aggregate, _ = ProjectAggregate.objects.get_or_create(project=project)
    aggregate = ProjectAggregate.objects.select_for_update().get(pk=aggregate.pk)
    aggregate.suggestions = {**(aggregate.suggestions or {}), "handoff": evaluation}
    aggregate.suggestions_settings_version = project.settings_version
    aggregate.save(update_fields=["suggestions", "suggestions_settings_version"])


@transaction.atomic
def handoff_evaluate(*, project_id: int) -> dict[str, Any] | None:
    """Re-evaluate the handoff rule from the stored blind figures; record a decision when eligibility changes;
    hand off by itself when the project's trigger is automatic (but never again right after a lead's undo)."""
    project = Project.objects.select_for_update().filter(pk=project_id).first()
    if project is None:
        return None
    aggregate = ProjectAggregate.objects.filter(project=project).first()
    blind = ((aggregate.suggestions if aggregate else {}) or {}).get("blind", {}).get("agreement")
    evaluation = _fresh_evaluation(project) if blind is None else handoff_evaluation(project=project, blind=blind)
    if project.phase == Project.Phase.HANDED_OFF:
        # Which basis the standing handoff had (blind agreement or certification): the dataset card reads it.
        made = (
            HandoffDecision.objects.filter(project=project, action=HandoffDecision.Action.HANDED_OFF)
            .values_list("figures", flat=True)
            .first()
        )
        evaluation["basis"] = (made or {}).get("basis", "blind_agreement")
    _store_evaluation(project, evaluation)

    last_state = (
        HandoffDecision.objects.filter(
            project=project, action__in=[HandoffDecision.Action.ELIGIBLE, HandoffDecision.Action.NOT_ELIGIBLE]
        )
        .values_list("action", flat=True)
        .first()
    )
    was_eligible = last_state == HandoffDecision.Action.ELIGIBLE
    if evaluation["eligible"] != was_eligible:
        HandoffDecision.objects.create(
            project=project,
            action=HandoffDecision.Action.ELIGIBLE if evaluation["eligible"] else HandoffDecision.Action.NOT_ELIGIBLE,
            rule=project.handoff_rule,
            explanation=evaluation["explanation"],
            figures=evaluation,
        )
    latest = HandoffDecision.objects.filter(project=project).values_list("action", flat=True).first()
    if (
        evaluation["eligible"]
        and project.handoff_trigger == Project.HandoffTrigger.AUTOMATIC
        and project.phase == Project.Phase.COLLECTING
        and latest not in (HandoffDecision.Action.UNDONE, HandoffDecision.Action.SUSPENDED)
    ):
        try:
            handoff_apply(project=project, user=None)
        except ValidationError:
            # The stored figures were a moment older than the labels handoff_apply re-reads; the next
            # evaluation, after the figures catch up, decides again.
            return evaluation
        evaluation = {**evaluation, "phase": Project.Phase.HANDED_OFF}
        _store_evaluation(project, evaluation)
    return evaluation


def _handoff_values(
    preferred: int, n_responses: int, stored: dict[int, tuple[int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """(μ, ν) floats per position: the suggestion's own values when complete, else the documented defaults."""
    if stored and len(stored) == n_responses:
        mu = np.array([stored[p][0] / PERMILLE for p in range(n_responses)])
        nu = np.array([stored[p][1] / PERMILLE for p in range(n_responses)])
        return mu, nu
    if preferred == TIE:
        return np.full(n_responses, DEFAULT_TIE[0]), np.full(n_responses, DEFAULT_TIE[1])
    mu = np.full(n_responses, DEFAULT_OTHER[0])
    nu = np.full(n_responses, DEFAULT_OTHER[1])
    mu[preferred], nu[preferred] = DEFAULT_PREFERRED
    return mu, nu


HandedItem = tuple[Item, list[Response], np.ndarray, np.ndarray]


def _handed_item(item: Item) -> HandedItem | None:
    """(item, responses by position, μ, ν) of an item handed to the LLM; None for an
    item with fewer than two responses, which gets no aggregate."""
    responses = sorted(item.responses.all(), key=lambda r: r.position)
    if len(responses) < 2:
        return None
    suggestion = item.suggestion
    by_response = {v.response_id: (v.mu, v.nu) for v in suggestion.values.all()}
    stored = {r.position: by_response[r.pk] for r in responses if r.pk in by_response}
    preferred = TIE if suggestion.preferred_position is None else suggestion.preferred_position
    mu, nu = _handoff_values(preferred, len(responses), stored)
    return item, responses, mu, nu


def _handoff_figures(project: Project, handed: list[HandedItem]) -> ItemFigures:
    """p_best and margin of the handed items through the item-figures function, as if one annotator had given
    the suggestion's (μ, ν) on a single criterion: the same definitions as a human aggregate, not a copy of them."""
    n_items = len(handed)
    width = max((len(responses) for _, responses, _, _ in handed), default=2)
    mu = np.zeros((n_items, width, 1, 1))
    nu = np.zeros((n_items, width, 1, 1))
    present = np.zeros((n_items, width, 1, 1), dtype=bool)
    response_ids = np.zeros((n_items, width), dtype=np.int64)
    n_responses = np.zeros(n_items, dtype=np.int64)
    for index, (_, responses, item_mu, item_nu) in enumerate(handed):
        count = len(responses)
        mu[index, :count, 0, 0] = item_mu
        nu[index, :count, 0, 0] = item_nu
        present[index, :count] = True
        response_ids[index, :count] = [r.pk for r in responses]
        n_responses[index] = count
    one_each = np.arange(n_items, dtype=np.int64)
    none = np.zeros(n_items, dtype=np.int64)
    data = Judgments(
        settings=FigureSettings.of(project),
        item_ids=np.array([item.pk for item, *_ in handed], dtype=np.int64),
        gold=np.full(n_items, UNDEFINED, dtype=np.int64),
        n_responses=n_responses,
        response_ids=response_ids,
        criterion_ids=np.zeros(1, dtype=np.int64),
        criterion_weights=np.ones(1),
        annotator_ids=np.zeros(1, dtype=np.int64),
        annotation_ids=one_each,
        annotation_item=one_each,
        annotation_annotator=none,
        annotation_slot=none,
        time_spent_ms=none,
        mu=mu,
        nu=nu,
        present=present,
        slot_annotator=np.zeros((n_items, 1), dtype=np.int64),
        binary=np.full((n_items, 1), np.nan),
        likert=np.full((n_items, 1), np.nan),
    )
    return item_figures_compute(data, np.ones(1))


def _short_with_suggestion(project: Project) -> QuerySet[Item]:
    """Items still short of their overlap that have an ok suggestion: what handoff acts on."""
    return Item.objects.filter(
        project=project,
        annotation_count__lt=F("project__overlap") + F("extra_labels"),
        suggestion__status=Suggestion.Status.OK,
    )


@dataclass(frozen=True)
class HandoffPreview:
    """What a handoff would do now, for the lead's confirmation page (the same querysets as handoff_apply)."""

    to_llm: int  # unlabelled items with a suggestion: they get a model_handoff aggregate
    partly_labelled: int  # short items with some human labels: they keep their human aggregate
    without_suggestion: int  # short items without a usable suggestion: left without an aggregate
    complete: int  # items with all their labels: unchanged
    evaluation: dict[str, Any]

    @property
    def stops_serving(self) -> int:
        """Items annotators will no longer be served (every item short of its overlap)."""
        return self.to_llm + self.partly_labelled + self.without_suggestion


def handoff_preview(*, project: Project) -> HandoffPreview:
    """Count what handoff_apply would hand over, keep and leave, and whether the rule allows it, changing nothing."""
    counts = Item.objects.filter(project=project).aggregate(
        short=Count("id", filter=Q(annotation_count__lt=F("project__overlap") + F("extra_labels"))),
        complete=Count("id", filter=Q(annotation_count__gte=F("project__overlap") + F("extra_labels"))),
    )
    short = _short_with_suggestion(project)
    to_llm = short.filter(annotation_count=0).annotate(n=Count("responses")).filter(n__gte=2).count()
    partly = short.filter(annotation_count__gt=0).count()
    with_suggestion = short.count()
    return HandoffPreview(
        to_llm=to_llm,
        partly_labelled=partly,
        without_suggestion=(counts["short"] or 0) - with_suggestion,
        complete=counts["complete"] or 0,
        evaluation=_fresh_evaluation(project),
    )


@transaction.atomic
def handoff_apply(*, project: Project, user: User | None = None, basis: str = "blind_agreement") -> HandoffDecision:
    """Hand the items still short of their overlap, with an ok suggestion, to the LLM and stop serving items.

    ``basis``: the project's rule on blind agreement (``blind_agreement``), or the certification of the model's
    accuracy from certification requests (``certification``: its lower bound ≥ the threshold, recomputed now).
    Either way the items get provenance ``model_handoff`` (undo and the audit treat them alike); the decision and
    the stored evaluation say which basis it was, and the dataset card counts them as certified.
    """
    if basis not in HANDOFF_BASES:
        raise ValidationError({"basis": f"Expected one of {', '.join(HANDOFF_BASES)}."})
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.phase != Project.Phase.COLLECTING:
        raise ValidationError({"phase": f"The project is {project.get_phase_display().lower()}, not collecting."})
    evaluation = {**_fresh_evaluation(project), "basis": basis}
    if basis == "certification":
        certified = labeling_figures(project=project)["certification"]
        evaluation = {**evaluation, "eligible": certified["certified"], "certification": certified}
        evaluation["explanation"] = (
            f"{'Certified' if certified['certified'] else 'Not certified'}: {certified['reason']}."
        )
    if not evaluation["eligible"]:
        raise ValidationError({"handoff": f"Handoff refused. {evaluation['explanation']}"})

    short = _short_with_suggestion(project)
    # Human labels always win (the aggregation engine rebuilds a human aggregate for any labelled item), so a
    # partly labelled item keeps its human aggregate; it only stops being served, like every other item.
    partly_labelled = short.filter(annotation_count__gt=0).count()
    items = list(
        short.filter(annotation_count=0)
        .select_related("suggestion")
        .prefetch_related("responses", "suggestion__values")
        .order_by("id")
    )
    item_ids = [item.pk for item in items]
    ResponseAggregate.objects.filter(item_id__in=item_ids).delete()
    ItemAggregate.objects.filter(item_id__in=item_ids).delete()
    handed = [entry for entry in map(_handed_item, items) if entry is not None]
    figures = _handoff_figures(project, handed)
    now = timezone.now()
    item_rows: list[ItemAggregate] = []
    response_rows: list[ResponseAggregate] = []
    for index, (item, responses, mu, nu) in enumerate(handed):
        scores = mu - nu
        order = np.lexsort((-(mu + nu), -scores))
        worst_index = int(order[-1])
        best = int(figures.best[index])
        item_rows.append(
            ItemAggregate(
                project=project,
                item=item,
                provenance=Provenance.MODEL_HANDOFF,
                operator=project.aggregation_operator,
                best_position=best,
                worst_position=TIE if best == TIE else worst_index,
                p_best=float(figures.p_best[index]),
                margin=float(figures.margin[index]),
                hesitation=float(np.mean(1 - mu - nu)),
                agreement=None,
                signed_preference=float((scores[0] - scores[1]) / 2),
                n_annotators=0,
                source_updated_at=None,
                settings_version=project.settings_version,
                computed_at=now,
            )
        )
        response_rows.extend(
            ResponseAggregate(
                item=item,
                response=response,
                criterion=None,
                operator=project.aggregation_operator,
                mu=float(mu[position]),
                nu=float(nu[position]),
            )
            for position, response in enumerate(responses)
        )
    ItemAggregate.objects.bulk_create(item_rows, batch_size=2000)
    ResponseAggregate.objects.bulk_create(response_rows, batch_size=2000)
    project.phase = Project.Phase.HANDED_OFF
    project.save(update_fields=["phase", "updated_at"])
    decision = HandoffDecision.objects.create(
        project=project,
        action=HandoffDecision.Action.HANDED_OFF,
        rule=project.handoff_rule,
        explanation=(
            f"{len(item_rows)} item{'s' if len(item_rows) != 1 else ''} handed to the LLM "
            f"({'automatically' if user is None else 'by a lead'}); {partly_labelled} partly labelled item"
            f"{'s' if partly_labelled != 1 else ''} keep their human aggregate. {evaluation['explanation']}"
        ),
        figures=evaluation,
        items_affected=len(item_rows),
        decided_by=user,
    )
    _store_evaluation(project, {**evaluation, "phase": project.phase})
    events.project_event(
        project_id=project.pk,
        name="handoff.made",
        data={"decision_id": decision.pk, "items": len(item_rows), "basis": basis, "automatic": user is None},
    )
    return decision


@transaction.atomic
def handoff_undo(*, project: Project, user: User | None) -> HandoffDecision:
    """Remove every model_handoff aggregate and resume labelling where it stopped."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.phase != Project.Phase.HANDED_OFF:
        raise ValidationError({"phase": "The project is not handed off: there is nothing to undo."})
    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
    item_ids = list(handed.values_list("item_id", flat=True))
    ResponseAggregate.objects.filter(item_id__in=item_ids).delete()
    handed.delete()
    project.phase = Project.Phase.COLLECTING
    project.save(update_fields=["phase", "updated_at"])
    labelled = list(Item.objects.filter(pk__in=item_ids, annotation_count__gt=0).values_list("id", flat=True))
    if labelled:
        events.labels_changed(project_id=project.pk, item_ids=labelled)
    decision = HandoffDecision.objects.create(
        project=project,
        action=HandoffDecision.Action.UNDONE,
        rule=project.handoff_rule,
        explanation=(
            f"Handoff undone: {len(item_ids)} model aggregate{'s' if len(item_ids) != 1 else ''} removed; "
            "labelling resumes."
        ),
        figures={"items": len(item_ids)},
        items_affected=len(item_ids),
        decided_by=user,
    )
    events.project_event(
        project_id=project.pk, name="handoff.undone", data={"decision_id": decision.pk, "items": len(item_ids)}
    )
    aggregate = ProjectAggregate.objects.filter(project=project).first()
    if aggregate and "handoff" in (aggregate.suggestions or {}):
        _store_evaluation(project, {**aggregate.suggestions["handoff"], "phase": project.phase})
    return decision
