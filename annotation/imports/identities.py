"""A lead links an imported annotator (projects.imports.annotators) to a real member of the project.

The identity's labels move to the member, so the member's weight, agreement and exports count them, and later
imports of the same name file under the member (and are compared with what the member holds: unchanged rows stay
no-ops). It lives in annotation because it moves annotations, which projects may not import.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Annotation
from config import events
from projects.models import ImportedAnnotator, Membership, Project


def check_identity_link(*, identity: ImportedAnnotator, member_id: int) -> Membership:
    """The membership the identity may be linked to; ValidationError naming the problem otherwise."""
    if identity.linked_member_id is not None:
        raise ValidationError({"member": f"{identity.external_id} is already linked to a member."})
    membership = (
        Membership.objects.filter(project_id=identity.project_id, user_id=member_id, user__imported_identity=None)
        .select_related("user")
        .first()
    )
    if membership is None:
        raise ValidationError({"member": "Pick a member of this project (not another imported annotator)."})
    both = Annotation.objects.filter(annotator_id=member_id, item__in=identity.user.annotations.values("item_id"))
    clashes = list(both.values_list("item__external_id", flat=True).order_by("item__external_id")[:5])
    if clashes:
        raise ValidationError(
            {
                "member": f"{membership.user.get_username()} and {identity.external_id} both labelled "
                f"item(s) {', '.join(clashes)}: one person labels an item once, so they cannot be linked."
            }
        )
    return membership


@transaction.atomic
def imported_annotator_link(*, project: Project, identity_id: int, member_id: int) -> ImportedAnnotator:
    """Link the identity to the member and move its labels to them (nothing moves if a check fails)."""
    identity = ImportedAnnotator.objects.select_for_update().select_related("user").get(pk=identity_id, project=project)
    membership = check_identity_link(identity=identity, member_id=member_id)
    # A shadow cannot log in, so it holds no claims or exposures: its annotations are all there is to move.
    item_ids = set(Annotation.objects.filter(annotator=identity.user).values_list("item_id", flat=True))
    Annotation.objects.filter(annotator=identity.user).update(annotator=membership.user, updated_at=timezone.now())
    # The shadow keeps nothing: it leaves the member lists, so the dashboard counts the person once.
    Membership.objects.filter(project=project, user=identity.user).delete()
    identity.linked_member = membership.user
    identity.linked_at = timezone.now()
    identity.save(update_fields=["linked_member", "linked_at"])
    if item_ids:
        events.labels_changed(project_id=project.pk, item_ids=item_ids)
    return identity
