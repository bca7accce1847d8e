"""Reads of project data. Every one checks membership: outsiders get Http404, never a hint the row exists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Prefetch, QuerySet
from django.http import Http404

from config import compiled_sql
from config.cache_prefetch import MISSING, prefetch_discard, prefetch_take
from projects.models import Criterion, Item, Job, Membership, Project, Response, SuggestionValue

AnyUser = AbstractBaseUser | AnonymousUser

# The role found by the membership check, kept on the request's user object for the rest of that request, so the
# services it calls next need not query the membership again (the user object does not outlive the request).
_ROLES_ATTRIBUTE = "_penumbra_project_roles"
_CRITERIA_ATTRIBUTE = "_penumbra_criteria"
# Criteria are read by every save and every item shown and change almost never: they are also kept in the shared
# cache (with FAST_PATHS on). A change puts a tombstone in their place, in its transaction and again after the
# commit, and readers only ever ``add`` (set if absent), so a request that read the old rows before the commit cannot
# put them back (the discipline of the cached user, config/auth.py). The expiry bounds what a write missed during a
# cache outage (the cache fails open) could leave behind.
CRITERIA_CACHE_SECONDS = 300
CRITERIA_TOMBSTONE = "forgotten"
# Long enough for any request that read the old rows before the commit to have tried its add.
CRITERIA_TOMBSTONE_SECONDS = 10
_RESPONSES_ATTRIBUTE = "_penumbra_responses"
# The largest id a row can have (ids are 64-bit).
ID_MAX = 2**63 - 1


def criteria_cache_key(project_id: Any) -> str:
    """A project's criteria in the shared cache (config.cache_prefetch reads it ahead on the project's pages)."""
    return f"project:{int(project_id)}:criteria"


def criteria_forget(*, project_id: int) -> None:
    """Put a tombstone in place of a project's cached criteria now and again once the current transaction commits."""
    key = criteria_cache_key(project_id)
    prefetch_discard("default", key)
    cache.set(key, CRITERIA_TOMBSTONE, CRITERIA_TOMBSTONE_SECONDS)
    transaction.on_commit(lambda: cache.set(key, CRITERIA_TOMBSTONE, CRITERIA_TOMBSTONE_SECONDS))


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
        cached = _criteria_shared(project.pk) if settings.FAST_PATHS else None
        if cached is None:
            cached = list(Criterion.objects.filter(project_id=project.pk))
        setattr(project, _CRITERIA_ATTRIBUTE, cached)
    return list(cached)


def _criteria_shared(project_id: int) -> list[Criterion] | None:
    """The criteria from the shared cache, or read from the rows and added there (never over a tombstone)."""
    key = criteria_cache_key(project_id)
    try:
        cached = prefetch_take("default", key)
    except Exception:  # the read ahead failed: the cache fails open, as its own read would have
        cached = None
    if cached is MISSING:
        cached = cache.get(key)
    if isinstance(cached, list):
        return cached
    rows = list(Criterion.objects.filter(project_id=project_id))
    if cached is None:
        cache.add(key, rows, CRITERIA_CACHE_SECONDS)
    return rows


def item_with_responses(*, project: Project, item_id: int) -> Item | None:
    """The project's item with its responses (as :func:`item_responses` reads them) in one statement."""
    found = Response.objects.filter(item_id=item_id, item__project_id=project.pk).select_related("item")
    responses = list(found.order_by("position"))
    if not responses:
        return Item.objects.filter(pk=item_id, project_id=project.pk).first()
    item = responses[0].item
    item_responses_remember(item, responses)
    return item


def item_responses_remember(item: Item, responses: list[Response]) -> None:
    """Keep ``responses`` (all of the item's) on the item object, for :func:`item_responses` to answer with."""
    for response in responses:
        response.item = item
    setattr(item, _RESPONSES_ATTRIBUTE, sorted(responses, key=lambda response: response.position))


def item_responses(item: Item) -> list[Response]:
    """The item's responses by stored position, read once per item object (a ``prefetch_related("responses")`` of
    the caller's query is used as it is)."""
    remembered = getattr(item, _RESPONSES_ATTRIBUTE, None)
    if remembered is None:
        remembered = sorted(item.responses.all(), key=lambda response: response.position)
        setattr(item, _RESPONSES_ATTRIBUTE, remembered)
    return list(remembered)


def _member_project(values: Mapping[str, Any]) -> QuerySet[Project]:
    return Project.objects.filter(pk=values["project_id"], memberships__user_id=values["user_id"]).annotate(
        member_role=F("memberships__role")
    )


def membership_get(*, user: AnyUser, project_id: int) -> Membership | None:
    """The user's membership of the project with the project read in the same statement; None for a non-member.

    Every request to a project's pages starts here, so on PostgreSQL the statement is compiled once per process
    (config.compiled_sql): the project with the member's role, from which the membership is rebuilt."""
    if not user.is_authenticated or not 0 < int(project_id) <= ID_MAX:
        return None  # an id no row can have (the ORM answers these without a statement; the compiled path cannot)
    named = {"project_id": int(project_id), "user_id": int(user.pk)}
    project: Any
    if compiled_sql.enabled():
        project = compiled_sql.first_row(Project, ("member project",), _member_project, named)
    else:
        project = _member_project(named).first()
    if project is None:
        return None
    return Membership(user_id=user.pk, project=project, role=project.member_role)


PROJECT_CREATORS_CHOICES = ("staff", "everyone")


def project_create_allowed(user: AnyUser) -> bool:
    """Whether ``user`` may create a project (the API, the project-creation page and any later door ask this one
    function). ``PROJECT_CREATORS`` decides: "staff" (the default) lets staff and users granted the "Can add
    project" permission (projects.add_project, given in the admin, alone or through a group); "everyone" lets any
    signed-in account, as before the setting existed."""
    if not user.is_authenticated or not user.is_active:
        return False
    if settings.PROJECT_CREATORS == "everyone":
        return True
    has_perm = getattr(user, "has_perm", None)  # PermissionsMixin's, on every account model Penumbra uses
    return bool(getattr(user, "is_staff", False) or (has_perm is not None and has_perm("projects.add_project")))


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


# --- what the REST API lists: each read applies the access rule itself ---------------------------------------------


def project_role_for(*, user: AnyUser, project: Project) -> str | None:
    """The user's role in a project they reached through :func:`project_get_for_user` (remembered, no query)."""
    return role_remembered(user=user, project_id=project.pk) or project_role_get(user=user, project=project)


def projects_with_roles_for_user(*, user: AnyUser) -> tuple[list[Project], dict[int, str]]:
    """The user's projects (with their criteria) and their role in each."""
    if not user.is_authenticated:
        return [], {}
    projects = list(project_list_for_user(user=user).prefetch_related("criteria"))
    roles = dict(Membership.objects.filter(user_id=user.pk, project__in=projects).values_list("project_id", "role"))
    return projects, roles


def criteria_for_member(*, user: AnyUser, project_id: int) -> list[Criterion]:
    project = project_get_for_user(user=user, project_id=project_id)
    return list(project.criteria.all())


def members_for_lead(*, user: AnyUser, project_id: int) -> QuerySet[Membership]:
    project = project_get_for_lead(user=user, project_id=project_id)
    return project.memberships.select_related("user").order_by("user__username")


def user_by_username(*, username: str) -> Any:
    """The account a lead names to add as a member (the caller checked the lead), or None.

    A study participant's account and a deactivated account are None too, answered exactly as a name nobody has:
    they may not be added, and the answer must not tell which names exist.
    """
    return get_user_model().objects.filter(username=username, is_active=True, study_participant__isnull=True).first()


def items_for_member(*, user: AnyUser, project_id: int) -> tuple[QuerySet[Item], bool]:
    """The project's items with their responses, and whether the user leads it: leads also get the suggestion (the
    API shows them is_blind, gold and the suggestion)."""
    project = project_get_for_user(user=user, project_id=project_id)
    lead = project_role_for(user=user, project=project) == Membership.Role.LEAD
    items = Item.objects.filter(project=project).prefetch_related("responses")
    if lead:
        items = items.select_related("suggestion").prefetch_related(
            Prefetch("suggestion__values", queryset=SuggestionValue.objects.select_related("response"))
        )
    return items, lead


def item_for_member(*, user: AnyUser, project_id: int, item_id: int) -> tuple[Item, bool]:
    items, lead = items_for_member(user=user, project_id=project_id)
    item = items.filter(pk=item_id).first()
    if item is None:
        raise Http404("No such item.")
    return item, lead


def jobs_for_lead(*, user: AnyUser, project_id: int) -> QuerySet[Job]:
    project = project_get_for_lead(user=user, project_id=project_id)
    return Job.objects.filter(project=project)


def job_get_for_lead(*, user: AnyUser, job_id: int, kind: str | None = None) -> Job:
    """A job of a project the user leads (of ``kind`` when given); Http404 otherwise, whether or not it exists."""
    jobs = Job.objects.filter(pk=job_id)
    if kind is not None:
        jobs = jobs.filter(kind=kind)
    project_id = jobs.values_list("project_id", flat=True).first()
    if project_id is None:
        raise Http404("No such job.")
    project = project_get_for_lead(user=user, project_id=project_id)
    return jobs.get(project=project)


def projects_led_by(*, user: AnyUser) -> list[Project]:
    """The projects ``user`` leads, for the new-project page's copy list."""
    if not user.is_authenticated:
        return []
    return list(
        Project.objects.filter(memberships__user_id=user.pk, memberships__role=Membership.Role.LEAD).order_by("name")
    )


def project_settings_for_copy(
    *, user: AnyUser, project_id: int, names: Sequence[str]
) -> tuple[dict[str, Any], list[Criterion]]:
    """The settings ``names`` and the criteria of a project ``user`` leads (404 for anyone else)."""
    project = project_get_for_lead(user=user, project_id=project_id)
    return {name: getattr(project, name) for name in names}, list(project.criteria.order_by("position", "id"))


def gold_items_for_lead(*, project: Project, limit: int = 300) -> list[Item]:
    """Items with gold (the ones a study link may use as attention checks), by external id, for a lead's picker;
    the project comes from a lead check (project_get_for_lead or a selector that made it)."""
    return list(
        Item.objects.filter(project=project, gold_position__isnull=False)
        .only("id", "external_id", "prompt", "gold_position")
        .order_by("external_id")[:limit]
    )
