"""Reads of project data. Every one checks membership: outsiders get Http404, never a hint the row exists."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet, prefetch_related_objects
from django.http import Http404

from projects.models import Criterion, Item, Membership, Project, Response

AnyUser = AbstractBaseUser | AnonymousUser

# The role found by the membership check, kept on the request's user object for the rest of that request, so the
# services it calls next need not query the membership again (the user object does not outlive the request).
_ROLES_ATTRIBUTE = "_penumbra_project_roles"
_CRITERIA_ATTRIBUTE = "_penumbra_criteria"
# Criteria are read by every save and every item shown and change almost never: they are also kept in the shared
# cache, forgotten after each commit that changes them (criteria_forget). The expiry bounds what a write missed
# during a cache outage (the cache fails open) or a read racing a change could leave behind.
CRITERIA_CACHE_SECONDS = 300


def _criteria_key(project_id: int) -> str:
    return f"project:{int(project_id)}:criteria"


def criteria_forget(*, project_id: int) -> None:
    """Drop the cached criteria of a project now and again once the current transaction commits (a request that
    read the old rows in between may have cached them again)."""
    key = _criteria_key(project_id)
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key))


def criteria_forget_on_change(sender: Any, instance: Criterion, **kwargs: Any) -> None:
    """post_save / post_delete receiver: any write of a criterion (admin, import, services) forgets the cache."""
    criteria_forget(project_id=instance.project_id)


def _role_remember(user: AnyUser, project_id: int, role: str) -> None:
    roles = getattr(user, _ROLES_ATTRIBUTE, None)
    if roles is None:
        roles = {}
        setattr(user, _ROLES_ATTRIBUTE, roles)
    roles[int(project_id)] = role


def role_remembered(*, user: AnyUser, project_id: int) -> str | None:
    """The role a membership check already found for this user object in this request, if any."""
    roles = getattr(user, _ROLES_ATTRIBUTE, None)
    return roles.get(int(project_id)) if roles else None


def project_criteria(project: Project) -> list[Criterion]:
    """The project's criteria, read once per project object (a request reads them for parsing, saving and
    rendering)."""
    cached = getattr(project, _CRITERIA_ATTRIBUTE, None)
    if cached is None:
        key = _criteria_key(project.pk)
        cached = cache.get(key)
        if cached is None:
            cached = list(Criterion.objects.filter(project_id=project.pk))
            cache.set(key, cached, CRITERIA_CACHE_SECONDS)
        setattr(project, _CRITERIA_ATTRIBUTE, cached)
    return list(cached)


def item_with_responses(*, project: Project, item_id: int) -> Item | None:
    """The project's item with its responses (as :func:`item_responses` reads them) in one statement."""
    found = Response.objects.filter(item_id=item_id, item__project_id=project.pk).select_related("item")
    responses = list(found.order_by("position"))
    if not responses:
        return Item.objects.filter(pk=item_id, project_id=project.pk).first()
    item = responses[0].item
    for response in responses:
        response.item = item
    cached: QuerySet[Response] = item.responses.all()
    cached._result_cache = responses  # as prefetch_related leaves it
    cached._prefetch_done = True  # type: ignore[attr-defined]
    item._prefetched_objects_cache = {"responses": cached}  # type: ignore[attr-defined]
    return item


def item_responses(item: Item) -> list[Response]:
    """The item's responses by stored position, read once per item object (Django's prefetch cache)."""
    if "responses" not in getattr(item, "_prefetched_objects_cache", {}):
        prefetch_related_objects([item], "responses")
    return sorted(item.responses.all(), key=lambda response: response.position)


def membership_get(*, user: AnyUser, project_id: int) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(user_id=user.pk, project_id=project_id).select_related("project").first()


def project_get_for_user(*, user: AnyUser, project_id: int, role: str | None = None) -> Project:
    """The project if ``user`` is a member (with ``role`` when given); Http404 otherwise.

    Superusers are operators and read every project as a lead would.
    """
    if user.is_authenticated and getattr(user, "is_superuser", False) and role != Membership.Role.ANNOTATOR:
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise Http404("No such project.")
        return project
    membership = membership_get(user=user, project_id=project_id)
    if membership is None or (role is not None and membership.role != role):
        raise Http404("No such project.")
    _role_remember(user, project_id, membership.role)
    return membership.project


def project_get_for_lead(*, user: AnyUser, project_id: int) -> Project:
    return project_get_for_user(user=user, project_id=project_id, role=Membership.Role.LEAD)


def project_get_for_annotator(*, user: AnyUser, project_id: int) -> Project:
    return project_get_for_user(user=user, project_id=project_id, role=Membership.Role.ANNOTATOR)


def project_role_get(*, user: AnyUser, project: Project) -> str | None:
    if user.is_authenticated and getattr(user, "is_superuser", False):
        return Membership.Role.LEAD
    membership = membership_get(user=user, project_id=project.pk)
    return membership.role if membership else None


def project_list_for_user(*, user: AnyUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(memberships__user_id=user.pk).distinct().order_by("name", "id")


def item_get_with_responses_for_user(*, user: AnyUser, project: Project, item_id: int) -> Item:
    """:func:`item_get_for_user` with the item's responses read in the same statement."""
    item = item_with_responses(project=project, item_id=item_id)
    if item is None:
        raise Http404("No such item.")
    return item


def item_get_for_user(*, user: AnyUser, project: Project, item_id: int) -> Item:
    """An item of a project the caller already reached through ``project_get_for_user``."""
    item = Item.objects.filter(pk=item_id, project=project).first()
    if item is None:
        raise Http404("No such item.")
    return item
