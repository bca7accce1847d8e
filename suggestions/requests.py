"""Drawing label requests: which items the labelling engine asks people about, and who is asked.

Calibration and certification draw from every item with a usable suggestion (the population the model would label),
by stratified simple random sampling: one stratum, or bins of the suggestion's confidence (``by_confidence``) with
equal allocation for calibration (every bin gets enough items to say something) and proportional allocation for
certification. Audit draws a Poisson sample at ``rate`` from the items handed to the model. Verification draws a
simple random sample of items whose suggestion is on screen anyway (not blind, not after-label): it records the
model's answer that the person sees and keeps or changes, and no inclusion probability, because its answers are never
evidence about accuracy. The draws are reproducible from the project seed (aggregation.maths.sampling), and each request
records its inclusion probability π, stratum and the model's confidence and answer at the time of the draw.

Each drawn item is asked of ``labels_per_item`` annotators who can sign in (an imported identity's shadow user cannot)
and have never held it, labelled it or been shown its suggestion (so nothing of the model's answer has reached them),
chosen by a seeded draw per (item, annotator); a person with a verification request for an item gets no blind request
for it, and the other way round. An item with no such annotator left is not requested and counts as unstaffed
(``items_unstaffed``); the estimators treat it as not answered.

The confidence of a suggestion is p(preferred ≻ other) = 0.5 + |S_a − S_b|/4 from its (μ, ν) per response (the
soft label of docs/DESIGN.md), in [0.5, 1]; a tie or a suggestion without values has none. The longest-response baseline
states no (μ, ν); its confidence is 0.5 + ½ (L₁ − L₂)/L₁ from the lengths L₁ ≥ L₂ of its two longest responses (how
much longer the one it prefers is), so a project on the baseline can still be calibrated by confidence. A draw by
confidence has only the items with a confidence as its population (π = 0 for the others, which it never draws).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.db.models.functions import Length

from aggregation.maths import sampling
from aggregation.models import ItemAggregate, Provenance
from annotation.models import Annotation, Assignment, LabelRequest, SuggestionExposure
from projects.models import TIE, ImportedAnnotator, Membership, Project, Response, Suggestion, SuggestionValue

MAX_LABELS_PER_ITEM = 10
MAX_REQUESTS = 100_000


def suggestion_confidence(preferred: int | None, values: dict[int, tuple[int, int]]) -> float | None:
    """p(preferred ≻ the best other response) from per-mille (μ, ν) per stored position (module docstring)."""
    if preferred is None or preferred == TIE or preferred not in values or len(values) < 2:
        return None
    score = {position: (mu - nu) / 1000.0 for position, (mu, nu) in values.items()}
    other = max(s for position, s in score.items() if position != preferred)
    return min(max(0.5 + (score[preferred] - other) / 4.0, 0.0), 1.0)


@dataclass(frozen=True)
class Population:
    item_ids: list[int]
    external_ids: list[str]
    machine: list[int]
    confidence: list[float | None]


def request_population(*, project: Project, kind: str) -> Population:
    """The items a draw of ``kind`` chooses from (module docstring), in id order."""
    suggestions = Suggestion.objects.filter(
        item__project=project, status=Suggestion.Status.OK, preferred_position__isnull=False
    )
    if kind == LabelRequest.Kind.AUDIT:
        handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
        suggestions = suggestions.filter(item_id__in=handed.values("item_id"))
    elif kind == LabelRequest.Kind.VERIFICATION:
        suggestions = suggestions.filter(item__is_blind=False)
    rows = list(
        suggestions.order_by("item_id").values_list("item_id", "item__external_id", "preferred_position", "source")
    )
    values: dict[int, dict[int, tuple[int, int]]] = {}
    for item_id, position, mu, nu in SuggestionValue.objects.filter(
        suggestion__item_id__in=[row[0] for row in rows]
    ).values_list("suggestion__item_id", "response__position", "mu", "nu"):
        values.setdefault(item_id, {})[position] = (mu, nu)
    lengths: dict[int, list[int]] = {}
    baseline = [row[0] for row in rows if row[3] == Suggestion.Source.BASELINE and row[0] not in values]
    for item_id, length in (
        Response.objects.filter(item_id__in=baseline).annotate(n=Length("text")).values_list("item_id", "n")
    ):
        lengths.setdefault(item_id, []).append(int(length))

    def confidence(row: tuple[Any, ...]) -> float | None:
        if row[0] in values:
            return suggestion_confidence(row[2], values[row[0]])
        ranked = sorted(lengths.get(row[0], []), reverse=True)
        if row[2] in (None, TIE) or len(ranked) < 2 or ranked[0] == 0:
            return None
        return 0.5 + 0.5 * (ranked[0] - ranked[1]) / ranked[0]

    return Population(
        item_ids=[row[0] for row in rows],
        external_ids=[row[1] for row in rows],
        machine=[TIE if row[2] is None else int(row[2]) for row in rows],
        confidence=[confidence(row) for row in rows],
    )


def check_request_draw(
    *, project: Project, kind: str, size: int | None, rate: float | None, labels_per_item: int, by_confidence: bool
) -> None:
    """Raise ValidationError naming each bad argument; nothing is written."""
    errors: dict[str, str] = {}
    if kind not in LabelRequest.Kind.values:
        errors["kind"] = f"Expected one of {', '.join(LabelRequest.Kind.values)}."
    if not 1 <= labels_per_item <= MAX_LABELS_PER_ITEM:
        errors["labels_per_item"] = f"Expected a whole number from 1 to {MAX_LABELS_PER_ITEM}."
    if kind == LabelRequest.Kind.AUDIT:
        if rate is None or not 0.0 < rate <= 1.0:
            errors["rate"] = "An audit samples the handed-off items at a rate in (0, 1]."
        if project.phase != Project.Phase.HANDED_OFF:
            errors["kind"] = "An audit follows a handoff: this project has not handed off."
    elif size is None or not 1 <= size <= MAX_REQUESTS:
        errors["size"] = f"Expected a number of items from 1 to {MAX_REQUESTS}."
    if kind == LabelRequest.Kind.VERIFICATION and project.suggestion_display == Project.SuggestionDisplay.AFTER_LABEL:
        errors["kind"] = "Verification shows the model's answer first; this project shows it only after a label."
    if by_confidence and kind not in (LabelRequest.Kind.CALIBRATION, LabelRequest.Kind.CERTIFICATION):
        errors["by_confidence"] = "Only calibration and certification draws are stratified by confidence."
    if errors:
        raise ValidationError(errors)


def _annotators_for(
    *, project: Project, item_ids: list[int], external_ids: dict[int, str], kind: str, per_item: int
) -> dict[int, list[int]]:
    """Up to ``per_item`` annotators per item among those who never held it, in a seeded order."""
    # Only people who can sign in: an imported identity's shadow user (inactive) would hold the request forever.
    annotators = list(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR, user__is_active=True)
        .exclude(user_id__in=ImportedAnnotator.objects.values("user_id"))
        .order_by("user_id")
        .values_list("user_id", flat=True)
    )
    held: dict[int, set[int]] = {}
    # Whoever held the item, labelled it (an imported label has no claim) or was shown its suggestion is not asked.
    for model, person in (
        (Assignment, "annotator_id"),
        (Annotation, "annotator_id"),
        (SuggestionExposure, "annotator_id"),
    ):
        for item_id, user_id in model.objects.filter(item_id__in=item_ids).values_list("item_id", person).order_by():
            held.setdefault(item_id, set()).add(user_id)
    # Blind and verification requests exclude each other per person and item: a verifier sees the model's answer,
    # so cannot label the item blind, and one who holds it blind is never shown the answer to verify.
    other_kinds = (
        LabelRequest.BLIND_KINDS if kind == LabelRequest.Kind.VERIFICATION else [LabelRequest.Kind.VERIFICATION]
    )
    for item_id, user_id in (
        LabelRequest.objects.filter(item_id__in=item_ids, kind__in=other_kinds)
        .exclude(status=LabelRequest.Status.WITHDRAWN)
        .values_list("item_id", "annotator_id")
    ):
        held.setdefault(item_id, set()).add(user_id)
    out: dict[int, list[int]] = {}
    for item_id in item_ids:
        free = [user for user in annotators if user not in held.get(item_id, set())]
        keys = sampling.uniform_draws(
            seed=project.seed, keys=[f"{external_ids[item_id]}:{user}" for user in free], salt=f"request-who-{kind}"
        )
        out[item_id] = [free[i] for i in np.argsort(keys, kind="stable")[:per_item]]
    return out


@dataclass(frozen=True)
class RequestDraw:
    kind: str
    draw: int
    population: int
    items_drawn: int
    requests: int
    items_unstaffed: int

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


@transaction.atomic
def label_requests_draw(
    *,
    project: Project,
    kind: str,
    size: int | None = None,
    rate: float | None = None,
    labels_per_item: int = 2,
    by_confidence: bool = False,
    user: User | None = None,
) -> RequestDraw:
    """Draw requests of ``kind`` and put them in annotators' queues (module docstring)."""
    check_request_draw(
        project=project, kind=kind, size=size, rate=rate, labels_per_item=labels_per_item, by_confidence=by_confidence
    )
    project = Project.objects.select_for_update().get(pk=project.pk)  # one draw at a time per project
    population = request_population(project=project, kind=kind)
    number = (LabelRequest.objects.filter(project=project, kind=kind).aggregate(n=Max("draw"))["n"] or 0) + 1
    u = sampling.uniform_draws(seed=project.seed, keys=population.external_ids, salt=f"request-{kind}-{number}")
    confidence = np.array([np.nan if c is None else c for c in population.confidence], dtype=np.float64)
    strata = np.zeros(u.size, dtype=np.int64)
    eligible = np.ones(u.size, dtype=bool)
    if by_confidence:
        eligible = ~np.isnan(confidence)
        if not eligible.any():
            raise ValidationError({"by_confidence": "No suggestion states a confidence ((μ, ν) per response)."})
        strata[eligible] = sampling.confidence_strata(confidence[eligible])
    if kind == LabelRequest.Kind.AUDIT:
        assert rate is not None
        draw = sampling.poisson_draw(draws=u, rate=rate)
    else:
        how: sampling.Allocation = (
            "equal" if kind == LabelRequest.Kind.CALIBRATION and by_confidence else "proportional"
        )
        n_strata = len(sampling.DEFAULT_CONFIDENCE_EDGES) - 1 if by_confidence else 1
        draw = sampling.stratified_draw(
            draws=u, strata=strata, total=int(size or 0), how=how, eligible=eligible, n_strata=n_strata
        )
    drawn = np.flatnonzero(draw.drawn)
    item_ids = [population.item_ids[i] for i in drawn]
    who = _annotators_for(
        project=project,
        item_ids=item_ids,
        external_ids={population.item_ids[i]: population.external_ids[i] for i in drawn},
        kind=kind,
        per_item=labels_per_item,
    )
    rows = [
        LabelRequest(
            project=project,
            item_id=population.item_ids[i],
            annotator_id=user_id,
            kind=kind,
            draw=number,
            inclusion_probability=None if kind == LabelRequest.Kind.VERIFICATION else float(draw.probability[i]),
            stratum=int(strata[i]) if by_confidence else None,
            confidence=population.confidence[i],
            machine_preferred=population.machine[i],
            prefilled=kind == LabelRequest.Kind.VERIFICATION,
        )
        for i in drawn
        for user_id in who[population.item_ids[i]]
    ]
    LabelRequest.objects.bulk_create(rows, batch_size=2000)
    return RequestDraw(
        kind=kind,
        draw=number,
        population=int(eligible.sum()),
        items_drawn=len(item_ids),
        requests=len(rows),
        items_unstaffed=sum(1 for item_id in item_ids if not who[item_id]),
    )


@transaction.atomic
def label_requests_withdraw(*, project: Project, kind: str) -> int:
    """Withdraw the open requests of ``kind`` (an audit ends with its handoff); answered ones stay as evidence."""
    return LabelRequest.objects.filter(project=project, kind=kind, status=LabelRequest.Status.OPEN).update(
        status=LabelRequest.Status.WITHDRAWN
    )


__all__ = [
    "RequestDraw",
    "check_request_draw",
    "label_requests_draw",
    "label_requests_withdraw",
    "request_population",
    "suggestion_confidence",
]
