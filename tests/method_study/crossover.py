"""A three-method crossover study set up as a lead would: the people join the project, then the study assigns them."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.method_study.services import method_study_create
from projects.models import Item, Membership, Project
from tests.factories import MembershipFactory

METHODS = ["binary", "likert", "ifs"]


def members_add(project: Project, *, lead, annotators: Sequence) -> None:
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for person in annotators:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)


def crossover_create(
    project: Project,
    *,
    lead,
    annotators: Sequence,
    items: Sequence[Item],
    block_size: int | None,
    repeat_rate: float | None = None,
) -> None:
    """The three methods over ``items`` for ``annotators`` (block_size None: the default design)."""
    method_study_create(
        project=project,
        created_by=lead,
        methods=METHODS,
        item_ids=[item.pk for item in items],
        annotator_ids=[person.pk for person in annotators],
        block_size=block_size,
        repeat_rate=repeat_rate,
    )
