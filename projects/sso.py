"""Single sign-on through OpenID Connect, by mozilla-django-oidc: on when ``OIDC_ENABLED``, off by default.

The library runs the authorization-code flow (state, nonce and PKCE) and checks the ID token's signature against the
provider's keys; this backend decides who the person is here:
- the account is the one whose username is the ``OIDC_USERNAME_CLAIM`` claim (``preferred_username``, else ``sub``),
  created on first sign-in without a password;
- an existing account that has a password of its own is a local account: signing in through the provider with its
  name is refused unless ``OIDC_LINK_LOCAL_ACCOUNTS`` (else whoever controls a name at the provider would take over
  the local account). Accounts without a password (invited, or made by an earlier sign-in) are matched. Imported
  annotators' placeholders and deactivated accounts never sign in;
- with ``OIDC_ROLES_CLAIM`` set, that claim's ``"<project slug>:<role>"`` entries (role ``lead`` or ``annotator``)
  make or change the person's memberships at every sign-in; memberships the claim does not name are left alone.
Local accounts keep signing in with their passwords: this backend answers only the provider's callback.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from config.auth import CachedModelBackend
from projects.models import ImportedAnnotator, Membership, Project
from projects.services import membership_set

logger = logging.getLogger(__name__)


def claimed_username(claims: dict[str, Any]) -> str:
    value = claims.get(settings.OIDC_USERNAME_CLAIM) or claims.get("sub") or ""
    return str(value).strip()[:150]


def claimed_roles(claims: dict[str, Any]) -> dict[str, str]:
    """project slug → role from the roles claim; entries that are not ``slug:role`` with a known role are skipped."""
    if not settings.OIDC_ROLES_CLAIM:
        return {}
    raw = claims.get(settings.OIDC_ROLES_CLAIM) or []
    roles: dict[str, str] = {}
    for entry in raw if isinstance(raw, list) else [raw]:
        slug, _, role = str(entry).partition(":")
        if slug and role in Membership.Role.values:
            roles[slug.strip()] = role
    return roles


@transaction.atomic
def sso_memberships_sync(*, user: Any, claims: dict[str, Any]) -> int:
    """Make the memberships the roles claim names; returns how many it set."""
    roles = claimed_roles(claims)
    projects = Project.objects.filter(slug__in=list(roles))
    for project in projects:
        membership_set(project=project, user=user, role=roles[project.slug])
    return len(projects)


class PenumbraOIDCBackend(OIDCAuthenticationBackend):
    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if not settings.OIDC_ENABLED:
            return None
        return super().authenticate(request, **kwargs)

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(claimed_username(claims))

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        users = self.UserModel.objects.filter(username=claimed_username(claims))
        found = users.first()
        if found is None:
            return users
        if not found.is_active or ImportedAnnotator.objects.filter(user_id=found.pk).exists():
            raise SuspiciousOperation("This account cannot sign in.")
        if found.has_usable_password() and not settings.OIDC_LINK_LOCAL_ACCOUNTS:
            logger.warning("single sign-on refused for %s: a local account has this name", found.username)
            raise SuspiciousOperation("A local account has this name.")
        return users

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel.objects.create_user(claimed_username(claims), email=claims.get("email") or "")
        sso_memberships_sync(user=user, claims=claims)
        return user

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        email = claims.get("email") or ""
        if email and email != user.email:
            user.email = email
            user.save(update_fields=["email"])
        sso_memberships_sync(user=user, claims=claims)
        return user

    def get_user(self, user_id: Any) -> Any:
        # The signed-in user from the cache, as for password sign-ins (config.auth).
        return CachedModelBackend().get_user(user_id)
