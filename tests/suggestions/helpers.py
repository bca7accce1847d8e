"""Labels written straight through the models, as the annotation services would store them, and a project built
with them that meets the handoff rule."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import F

from annotation.models import Annotation, AnnotationRevision, JudgmentValue, SuggestionExposure
from projects import blind
from projects.models import TIE, Item, Membership, Project, Response, Suggestion
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_evaluate
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory

# (μ, ν) per-mille for a clear IFS preference and for "no preference".
PREFERRED = (800, 100)
OTHER = (100, 800)
EVEN = (500, 300)


def items_create(project: Project, count: int, *, prefix: str = "sim") -> list[Item]:
    """``count`` two-response items with their hash draws, blind by the project's rate (bulk, fast)."""
    items = []
    for index in range(count):
        external_id = f"{prefix}-{index}"
        draw = blind.uniform_draw(seed=project.seed, external_id=external_id)
        items.append(
            Item(
                project=project,
                external_id=external_id,
                prompt=f"Prompt {external_id}",
                blind_draw=draw,
                is_blind=draw < project.blind_rate,
                queue_key=blind.queue_key(seed=project.seed, external_id=external_id),
            )
        )
    items = Item.objects.bulk_create(items)
    Response.objects.bulk_create(
        Response(item=item, position=position, text=f"Answer {position} to {item.external_id}")
        for item in items
        for position in (0, 1)
    )
    return items


def suggestions_create(items: Sequence[Item], preferred: Sequence[int], *, model: str = "sim-llm") -> None:
    Suggestion.objects.bulk_create(
        Suggestion(item=item, preferred_position=choice, model_name=model, rationale="Simulated.")
        for item, choice in zip(items, preferred, strict=True)
    )


def label(
    project: Project,
    item: Item,
    annotator,
    preferred: int,
    *,
    shown: bool = False,
    accepted: bool = False,
    exposure: str = SuggestionExposure.Kind.BEFORE_LABEL,
) -> Annotation:
    """One saved label preferring ``preferred`` (a position or TIE) in the project's mode."""
    annotation = Annotation.objects.create(
        project=project,
        item=item,
        annotator=annotator,
        mode=project.mode,
        response_order=[0, 1],
        binary_choice=preferred if project.mode == Project.Mode.BINARY else None,
        likert_value=_likert(project, preferred) if project.mode == Project.Mode.LIKERT else None,
        suggestion_shown=shown,
        accepted_suggestion=accepted,
        revision_count=1,
    )
    if project.mode == Project.Mode.IFS:
        ifs_values_set(annotation, preferred)
    AnnotationRevision.objects.create(
        annotation=annotation,
        number=1,
        payload=revision_payload(project, preferred),
        suggestion_shown=shown,
        accepted_suggestion=accepted,
    )
    if shown:
        SuggestionExposure.objects.create(project=project, item=item, annotator=annotator, kind=exposure)
    Item.objects.filter(pk=item.pk).update(annotation_count=F("annotation_count") + 1)
    return annotation


def revision_payload(project: Project, preferred: int) -> dict:
    """The judgment as the annotation services store it in a revision (annotation.saving)."""
    values = []
    if project.mode == Project.Mode.IFS:
        for criterion in project.criteria.all():
            for position in (0, 1):
                mu, nu = EVEN if preferred == TIE else PREFERRED if position == preferred else OTHER
                values.append({"response": position, "criterion": criterion.name, "mu": mu, "nu": nu})
    return {
        "mode": project.mode,
        "values": values,
        "binary_choice": preferred if project.mode == Project.Mode.BINARY else None,
        "likert_value": _likert(project, preferred) if project.mode == Project.Mode.LIKERT else None,
    }


def ifs_values_set(annotation: Annotation, preferred: int) -> None:
    JudgmentValue.objects.filter(annotation=annotation).delete()
    responses = list(annotation.item.responses.order_by("position"))
    values = []
    for criterion in annotation.project.criteria.all():
        for response in responses:
            if preferred == TIE:
                mu, nu = EVEN
            else:
                mu, nu = PREFERRED if response.position == preferred else OTHER
            values.append(JudgmentValue(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu))
    JudgmentValue.objects.bulk_create(values)


def _likert(project: Project, preferred: int) -> int:
    if preferred == TIE:
        return (project.likert_points + 1) // 2
    return 1 if preferred == 0 else project.likert_points


def handoff_eligible_project(*, lead, labeller, others: Sequence = (), **fields: object) -> Project:
    """27 blind items of overlap 2: the model suggests on the first 25, ``labeller`` labels the first 20 once in
    agreement with it (partly labelled), 5 are unlabelled with a suggestion and 2 without. The figures are computed
    and the handoff evaluated, as the worker does: the handoff rule is met. ``others`` are annotators too."""
    project = ProjectFactory(blind_rate=1.0, overlap=2, handoff_minimum_blind_comparisons=20, **fields)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for person in (labeller, *others):
        MembershipFactory(project=project, user=person)
    items = items_create(project, 27)
    for item in items[:25]:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[:20]:
        label(project, item, labeller, 0)
    suggestion_figures_recompute(project_id=project.pk)
    handoff_evaluate(project_id=project.pk)
    return project
