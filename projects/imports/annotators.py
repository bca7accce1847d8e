"""Whom imported labels are filed under: project-scoped identities for the names another tool's file uses.

A name in a file is a label, not an account. ``alice`` in this project's file, ``alice`` in another project's file
and a registered ``alice`` are three people as far as Penumbra can tell, so an import never uses, creates or
refuses an account by its name. Each (project, source, name) gets an ``ImportedAnnotator`` with a shadow user that
cannot log in (no usable password, inactive), because ``Annotation.annotator`` and everything that reads it (the
aggregation, the exports, the dashboard) need a user row; a nullable annotator would have touched every one of
them. Importing the same file again finds the same identities, two projects never collide, and a lead links an
identity to a real member once they know who it is (annotation.imports.identities moves the labels).

The one way to file labels under a member's own account by name is the import's explicit permission:
``allow_members`` for annotators of the project, ``allow_leads`` for its leads.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet

from projects.models import ImportedAnnotator, Membership, Project

NAME_MAX = 150
SOURCE_MAX = 20


def _shadow_username(project: Project, source: str, name: str) -> str:
    base = f"imp{project.pk}-{source}-{name}"[:140]
    users = get_user_model().objects
    username = base
    # A registered account (or another identity cut to the same 140 characters) may carry the name already.
    while users.filter(username=username).exists():
        username = f"{base}-{secrets.token_hex(3)}"
    return username


def _identity_create(*, project: Project, source: str, name: str) -> ImportedAnnotator:
    user = get_user_model()(username=_shadow_username(project, source, name), is_active=False)
    user.set_unusable_password()
    user.save()
    # A membership, as every annotator has: the dashboard, the weights and the method study list members.
    Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)
    return ImportedAnnotator.objects.create(project=project, source=source, external_id=name, user=user)


@transaction.atomic
def label_annotators_resolve(
    *,
    project: Project,
    usernames: Iterable[str],
    source: str = "native",
    allow_members: bool = False,
    allow_leads: bool = False,
) -> tuple[dict[str, AbstractBaseUser], dict[str, int]]:
    """The users that imported labels are filed under, by name, and how many identities this call created.

    - With ``allow_members`` / ``allow_leads``, a name that is the username of an annotator / a lead of this project
      is that member (the lead said the file uses the project's own usernames).
    - Any other name is this project's imported identity for (``source``, name): found again on every import (the
      member it is linked to, once linked), created with its shadow user the first time.
    """
    source = source[:SOURCE_MAX]
    names = {name.strip()[:NAME_MAX] for name in usernames if name.strip()}
    users: dict[str, AbstractBaseUser] = {}
    roles = [role for role, allowed in ((Membership.Role.ANNOTATOR, allow_members), (Membership.Role.LEAD, allow_leads))
             if allowed]  # fmt: skip
    if roles:
        for membership in Membership.objects.filter(
            project=project, role__in=roles, user__username__in=names, user__imported_identity__isnull=True
        ).select_related("user"):
            users[membership.user.get_username()] = membership.user
    known = ImportedAnnotator.objects.filter(
        project=project, source=source, external_id__in=names - set(users)
    ).select_related("user", "linked_member")
    for identity in known:
        users[identity.external_id] = identity.linked_member or identity.user
    created = 0
    for name in sorted(names - set(users)):
        users[name] = _identity_create(project=project, source=source, name=name).user
        created += 1
    return users, {"identities_created": created}


def imported_annotators_of(*, project: Project) -> QuerySet[ImportedAnnotator]:
    """The project's imported identities with their shadow and linked users (the caller checked the lead)."""
    return ImportedAnnotator.objects.filter(project=project).select_related("user", "linked_member")
