"""Reads for the people page: each member's progress, and the former members whose labels the project keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Max, Q

from annotation.models import Annotation, Assignment
from projects.models import ImportedAnnotator, Membership, Project
from projects.selectors import AnyUser, project_get_for_lead


@dataclass(frozen=True)
class PersonRow:
    user_id: int
    username: str
    role: str | None  # None: a former member
    invited: bool  # no password chosen yet
    labels: int
    skipped: int
    last_label_at: datetime | None


@dataclass(frozen=True)
class People:
    project: Project
    members: list[PersonRow]
    former: list[PersonRow]
    items: int


def people_get(*, user: AnyUser, project_id: int) -> People:
    """The project's members with their labels and skips, then former members who left labels; leads only.
    Five queries however many people."""
    project = project_get_for_lead(user=user, project_id=project_id)
    memberships = list(
        Membership.objects.filter(project=project).select_related("user").order_by("role", "user__username")
    )
    labels = {
        row["annotator_id"]: row
        for row in Annotation.objects.filter(project=project)
        .values("annotator_id")
        .annotate(n=Count("id"), last=Max("created_at"))
    }
    skipped = dict(
        Assignment.objects.filter(project=project, status=Assignment.Status.SKIPPED)
        .values("annotator_id")
        .annotate(n=Count("id"))
        .values_list("annotator_id", "n")
    )

    def row(user_id: int, username: str, role: str | None, invited: bool) -> PersonRow:
        done: dict[str, Any] = dict(labels.get(user_id, {}))
        return PersonRow(user_id, username, role, invited, done.get("n", 0), skipped.get(user_id, 0), done.get("last"))

    members = [row(m.user_id, m.user.get_username(), m.role, not m.user.has_usable_password()) for m in memberships]
    # Imported names are placeholders (the import page lists them), not people who left.
    member_ids = {m.user_id for m in memberships} | set(
        ImportedAnnotator.objects.filter(project=project).values_list("user_id", flat=True)
    )
    former_ids = [user_id for user_id in labels if user_id is not None and user_id not in member_ids]
    former_users = get_user_model().objects.filter(Q(pk__in=former_ids)).order_by("username") if former_ids else []
    former = [row(u.pk, u.get_username(), None, False) for u in former_users]
    return People(project=project, members=members, former=former, items=project.items.count())


def former_member_ids(*, project: Project, user_ids: set[int]) -> set[int]:
    """Which of ``user_ids`` are no longer members (their labels are shown as a former member's); imported names
    never were members and are not counted."""
    if not user_ids:
        return set()
    current = set(Membership.objects.filter(project=project, user_id__in=user_ids).values_list("user_id", flat=True))
    imported = set(
        ImportedAnnotator.objects.filter(project=project, user_id__in=user_ids).values_list("user_id", flat=True)
    )
    return user_ids - current - imported
