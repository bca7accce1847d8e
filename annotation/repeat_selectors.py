"""Reads of unannounced repeats for the page and the save (``annotation.queue.order`` serves them)."""

from __future__ import annotations

from typing import Any

from annotation.models import Repeat
from projects.models import Item, Project


def repeat_open_for(*, project: Project, item: Item, annotator: Any) -> Repeat | None:
    """The person's served, unanswered repeat of ``item``, or None. No statement when the project has no repeats:
    the page and the save of a plain project keep their budgets. A repeat served before the lead set the rate to 0
    is then left unanswered (the earlier judgment shows as usual)."""
    if project.repeat_rate <= 0:
        return None
    return Repeat.objects.filter(
        project=project, item=item, annotator_id=annotator.pk, answered_at__isnull=True
    ).first()
