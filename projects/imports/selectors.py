"""Reads for the import page: a project's import jobs, one of them, its report, and the imported identities.

Every read starts from projects.selectors.project_get_for_lead, so anyone but a lead of the project gets 404.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from projects.models import ImportedAnnotator, Job, Membership, Project
from projects.selectors import AnyUser, project_get_for_lead

IMPORT_KINDS = (Job.Kind.IMPORT_ITEMS, Job.Kind.IMPORT_LABELS)
JOBS_LISTED = 10
# What varies between two errors of the same reason: quoted values, numbers, and the record named in front.
_RECORD = re.compile(r"^(?:task|row|record|instance|line) [^:]*: ")
_VARYING = re.compile(r"\"[^\"]*\"|'[^']*'|\b\d+(?:\.\d+)?\b")


def import_jobs_recent(*, project: Project, limit: int = JOBS_LISTED) -> list[Job]:
    """The project's latest imports and dry runs, newest first (the caller has already checked the lead)."""
    return list(Job.objects.filter(project=project, kind__in=IMPORT_KINDS).order_by("-created_at", "-id")[:limit])


def import_job_get(*, user: AnyUser, project_id: int, job_id: int) -> tuple[Project, Job]:
    """One import job of a project the user leads; anyone else, or another project's job, gets Http404."""
    project = project_get_for_lead(user=user, project_id=project_id)
    job = Job.objects.filter(pk=job_id, project=project, kind__in=IMPORT_KINDS).select_related("created_by").first()
    if job is None:
        raise Http404("No such import.")
    return project, job


def errors_by_reason(errors: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """Row errors grouped by reason (the message without the record's name and values), most frequent first."""
    reasons = Counter(_VARYING.sub("…", _RECORD.sub("", str(e.get("message", ""))))[:200] for e in errors)
    return reasons.most_common()


def imported_annotators_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, QuerySet[ImportedAnnotator]]:
    project = project_get_for_lead(user=user, project_id=project_id)
    identities = ImportedAnnotator.objects.filter(project=project).select_related("user", "linked_member")
    return project, identities


def identity_get_for_lead(*, user: AnyUser, project_id: int, identity_id: int) -> tuple[Project, ImportedAnnotator]:
    project = project_get_for_lead(user=user, project_id=project_id)
    identity = ImportedAnnotator.objects.filter(pk=identity_id, project=project).first()
    if identity is None:
        raise Http404("No such imported annotator.")
    return project, identity


def linkable_members(*, project: Project) -> QuerySet[Membership]:
    """Members an identity may be linked to: people, not other imported identities."""
    return (
        Membership.objects.filter(project=project, user__imported_identity__isnull=True)
        .select_related("user")
        .order_by("user__username")
    )
