"""The after-label resolution step's "Keep my label": recorded as an event (annotation.models.ResolutionChoice), as
a change is by the resolution save, so the step has a keep rate."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import ResolutionChoice
from annotation.selectors import resolution_needed
from projects.models import Item, Project


def check_resolution_keep(*, project: Project, item: Item, annotator: AbstractBaseUser) -> None:
    if item.project_id != project.pk:
        raise ValidationError({"item": "This item does not belong to this project."})
    if not resolution_needed(project=project, item=item, annotator=annotator):
        raise ValidationError({"__all__": "There is no resolution to keep your label in for this item."})


@transaction.atomic
def resolution_keep(*, project: Project, item: Item, annotator: AbstractBaseUser) -> ResolutionChoice:
    """Record that the annotator kept their label on the resolution step (validated first, nothing written if not)."""
    check_resolution_keep(project=project, item=item, annotator=annotator)
    return ResolutionChoice.objects.create(project=project, item=item, annotator_id=annotator.pk, kept=True)
