"""A project's people and its end: invitations (by username or e-mail), role changes, removal, archive and delete.

Validate first (check_*), then act. An invitation is Django's password-reset token (signed with SECRET_KEY, expiring
after PASSWORD_RESET_TIMEOUT, void once the password is set), so no table of invitations is needed: the account exists
without a usable password until the invitee chooses one at the link.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from projects.models import Membership, Project
from projects.services import member_invite, membership_set


def invitation_path(user: AbstractBaseUser) -> str | None:
    """Where an invited person chooses a password; None once they have one (they sign in as usual)."""
    if user.has_usable_password():
        return None
    token = default_token_generator.make_token(user)  # type: ignore[arg-type]
    return reverse(
        "password_reset_confirm", kwargs={"uidb64": urlsafe_base64_encode(force_bytes(user.pk)), "token": token}
    )


def invitation_mail_configured() -> bool:
    """Without EMAIL_HOST mail goes to the log (config.settings): the lead is shown the link to pass on instead."""
    return bool(settings.EMAIL_HOST)


@dataclass(frozen=True)
class Invitation:
    user: AbstractBaseUser
    link: str | None  # absolute; None when the person already has a password
    mailed: bool


def _username_for(email: str) -> str:
    users = get_user_model().objects
    base = email.split("@", 1)[0][:140] or "member"
    candidate, n = base, 1
    while users.filter(username=candidate).exists():
        n += 1
        candidate = f"{base}{n}"
    return candidate


def check_invitee(address: str) -> str:
    address = address.strip()
    if not address:
        raise ValidationError({"address": "A username or an e-mail address is needed."})
    if "@" in address:
        try:
            validate_email(address)
        except ValidationError:
            raise ValidationError({"address": f"{address!r} is not an e-mail address."}) from None
    elif len(address) > 150:
        raise ValidationError({"address": "A username has at most 150 characters."})
    return address


@transaction.atomic
def member_invite_by_address(*, project: Project, address: str, role: str, base_url: str) -> Invitation:
    """Add the person named by a username or an e-mail address, creating an account without a password when there is
    none; a new account's link is mailed after commit when mail is configured, and returned either way."""
    address = check_invitee(address)
    users = get_user_model().objects
    user: AbstractBaseUser
    if "@" in address:
        found = users.filter(email__iexact=address).order_by("pk").first()
        if found is None:
            user = member_invite(project=project, username=_username_for(address), role=role)
            users.filter(pk=user.pk).update(email=address)
            user.email = address  # type: ignore[attr-defined]
        else:
            user = found
            membership_set(project=project, user=user, role=role)
    else:
        user = member_invite(project=project, username=address, role=role)
    path = invitation_path(user)
    link = base_url.rstrip("/") + path if path else None
    email = getattr(user, "email", "")
    mailed = bool(link and email and invitation_mail_configured())
    if mailed:
        subject = f"You are invited to {project.name} on Penumbra"
        body = f"Choose a password to join {project.name} as {role}:\n\n{link}\n"
        transaction.on_commit(lambda: send_mail(subject, body, None, [email]))
    return Invitation(user=user, link=link, mailed=mailed)


def _other_leads(project: Project, user_id: int) -> bool:
    return Membership.objects.filter(project=project, role=Membership.Role.LEAD).exclude(user_id=user_id).exists()


@transaction.atomic
def member_role_change(*, project: Project, user_id: int, role: str) -> Membership:
    membership = Membership.objects.select_for_update().filter(project=project, user_id=user_id).first()
    if membership is None:
        raise ValidationError({"member": "This person is not a member of the project."})
    if membership.role == Membership.Role.LEAD and role != Membership.Role.LEAD and not _other_leads(project, user_id):
        raise ValidationError({"role": "A project keeps at least one lead: make someone else lead first."})
    return membership_set(project=project, user=membership.user, role=role)


@transaction.atomic
def member_remove(*, project: Project, user_id: int) -> None:
    """End a membership. The person's labels stay (they are the project's data) and are shown as a former member's;
    their open assignments are released by the queue's expiry like any abandoned claim."""
    membership = Membership.objects.select_for_update().filter(project=project, user_id=user_id).first()
    if membership is None:
        raise ValidationError({"member": "This person is not a member of the project."})
    if membership.role == Membership.Role.LEAD and not _other_leads(project, user_id):
        raise ValidationError({"member": "A project keeps at least one lead: make someone else lead first."})
    if project.adaptive_expert_id == user_id:
        Project.objects.filter(pk=project.pk).update(adaptive_expert=None)
    membership.delete()


@transaction.atomic
def project_archive(*, project: Project) -> Project:
    """Close labelling for good (phase closed): labels, figures, exports and members stay readable by the leads."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.phase == Project.Phase.CLOSED:
        raise ValidationError({"__all__": "The project is already archived."})
    project.phase = Project.Phase.CLOSED
    project.save(update_fields=["phase", "updated_at"])
    return project


def check_project_delete(*, project: Project, confirmation: str) -> None:
    if confirmation.strip() != project.name:
        raise ValidationError({"confirmation": "Type the project's name exactly to delete it."})


@transaction.atomic
def project_delete(*, project: Project, confirmation: str) -> dict[str, Any]:
    """Delete the project with its items, labels, figures, jobs and links; accounts stay. Returns what went."""
    check_project_delete(project=project, confirmation=confirmation)
    deleted, _ = Project.objects.filter(pk=project.pk).delete()
    return {"name": project.name, "rows": deleted}
