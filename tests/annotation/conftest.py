"""Helpers for the annotation page tests: posting a full IFS form the way the page does."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from projects.models import Item, Project


def ifs_form(item: Item, values: dict[int, tuple[int, int]] | None = None, **extra: object) -> dict[str, object]:
    """A page POST for every response × criterion; ``values`` maps stored position to (μ, ν) per-mille."""
    data: dict[str, object] = {"client_token": uuid.uuid4().hex, "time_spent_ms": 4200}
    for response in item.responses.all():
        mu, nu = (values or {}).get(response.position, (600, 200))
        for criterion in item.project.criteria.all():
            data[f"mu-{response.position}-{criterion.pk}"] = mu
            data[f"nu-{response.position}-{criterion.pk}"] = nu
    data.update(extra)
    return data


def next_url(project: Project) -> str:
    return reverse("annotate_next", kwargs={"project_id": project.pk})


def item_url(project: Project, item: Item) -> str:
    return reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk})


@pytest.fixture
def claimed_item(project, annotator):
    """The item the queue hands the annotator first."""
    from annotation.queue.services import assignment_claim_next

    return assignment_claim_next(project=project, annotator=annotator).item
