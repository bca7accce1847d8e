"""Simulated annotators of known behaviour, so measured figures can be checked against true values.

Each item has a true better response. The LLM is right with probability ``llm_accuracy``; every annotator is right
with probability ``human_accuracy`` on their own; on a shown item an annotator copies the suggestion with
probability ``copy``. Then the true blind agreement is a·h + (1−a)(1−h), the true shown agreement is
copy + (1−copy)·blind, and the true gap is copy·(1 − blind).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotation.models import Annotation, JudgmentValue, SuggestionExposure
from projects.models import Item, Membership, Project, Response
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.suggestions.helpers import OTHER, PREFERRED, items_create, suggestions_create


@dataclass(frozen=True)
class Truth:
    blind_agreement: float
    shown_agreement: float
    gap: float


def truth(*, llm_accuracy: float, human_accuracy: float, copy: float) -> Truth:
    blind = llm_accuracy * human_accuracy + (1 - llm_accuracy) * (1 - human_accuracy)
    return Truth(blind_agreement=blind, shown_agreement=copy + (1 - copy) * blind, gap=copy * (1 - blind))


def simulate(
    *,
    items: int = 300,
    annotators: int = 3,
    llm_accuracy: float = 0.7,
    human_accuracy: float = 0.9,
    copy: float = 0.5,
    blind_rate: float = 0.3,
    seed: int = 7,
) -> Project:
    """An IFS project in blind_sample display where every annotator labelled every item."""
    rng = np.random.default_rng(seed)
    project = ProjectFactory(name=f"Simulation {seed}-{copy}", blind_rate=blind_rate, seed=seed)
    people = [UserFactory(username=f"sim{seed}-{copy}-{k}") for k in range(annotators)]
    for person in people:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    made = items_create(project, items)
    true_best = rng.integers(0, 2, size=items)
    llm_right = rng.random(items) < llm_accuracy
    suggested = np.where(llm_right, true_best, 1 - true_best)
    suggestions_create(made, suggested.tolist())

    criterion = project.criteria.get()

    responses = {(r.item_id, r.position): r for r in Response.objects.filter(item__project=project)}
    annotations, choices, exposures = [], [], []
    for index, item in enumerate(made):
        shown = not item.is_blind
        for person in people:
            own = true_best[index] if rng.random() < human_accuracy else 1 - true_best[index]
            copies = shown and rng.random() < copy
            choice = int(suggested[index]) if copies else int(own)
            annotations.append(
                Annotation(
                    project=project,
                    item=item,
                    annotator=person,
                    mode=Project.Mode.IFS,
                    response_order=[0, 1],
                    suggestion_shown=shown,
                    accepted_suggestion=bool(copies),
                    revision_count=1,
                )
            )
            choices.append(choice)
            if shown:
                exposures.append(
                    SuggestionExposure(
                        project=project, item=item, annotator=person, kind=SuggestionExposure.Kind.BEFORE_LABEL
                    )
                )
    annotations = Annotation.objects.bulk_create(annotations, batch_size=2000)
    values = []
    for annotation, choice in zip(annotations, choices, strict=True):
        for position in (0, 1):
            mu, nu = PREFERRED if position == choice else OTHER
            values.append(
                JudgmentValue(
                    annotation=annotation,
                    response=responses[(annotation.item_id, position)],
                    criterion=criterion,
                    mu=mu,
                    nu=nu,
                )
            )
    JudgmentValue.objects.bulk_create(values, batch_size=4000)
    SuggestionExposure.objects.bulk_create(exposures, batch_size=2000)
    Item.objects.filter(project=project).update(annotation_count=annotators)
    return project
