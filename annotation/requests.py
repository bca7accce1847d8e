"""Reads of label requests for the queue, the save and the visibility rule, as subqueries so that each folds into a
statement the caller makes anyway (the page and the save keep their statement budgets)."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from annotation.checks import request_kinds_served
from annotation.models import Assignment, LabelRequest
from projects.models import Project


def requests_withholding(*, project: Project, annotator_id: Any) -> QuerySet[LabelRequest]:
    """Correlated on ``item``: requests of this person that withhold the model's answer for the item, held or
    answered (a blind item stays blind after saving): calibration, certification and audit, and verification when
    the project's ``verify_visibility`` is blind."""
    kinds = list(LabelRequest.BLIND_KINDS)
    if project.verify_visibility == Project.VerifyVisibility.BLIND:
        kinds.append(LabelRequest.Kind.VERIFICATION)
    return LabelRequest.objects.filter(
        item=OuterRef("item"),
        annotator_id=annotator_id,
        kind__in=kinds,
        status__in=[LabelRequest.Status.OPEN, LabelRequest.Status.ANSWERED],
    )


def requests_verifying(*, annotator_id: Any) -> QuerySet[LabelRequest]:
    """Correlated on ``item``: this person's open verification request for the item."""
    return LabelRequest.objects.filter(
        item=OuterRef("item"),
        annotator_id=annotator_id,
        kind=LabelRequest.Kind.VERIFICATION,
        status=LabelRequest.Status.OPEN,
    )


def requests_to_serve(*, project: Project, annotator_id: int) -> QuerySet[Any]:
    """Item ids of this person's open label requests not yet in their queue, oldest first (``.values`` query); of
    the kinds the project's phase serves (``checks.request_kinds_served``)."""
    in_queue = Assignment.objects.filter(item=OuterRef("item"), annotator_id=annotator_id)
    requests = LabelRequest.objects.filter(project=project, annotator_id=annotator_id, status=LabelRequest.Status.OPEN)
    kinds = request_kinds_served(project)
    if kinds is not None:
        requests = requests.filter(kind__in=kinds)
    return requests.filter(~Exists(in_queue)).order_by("created_at", "pk").values_list("item_id", flat=True)
