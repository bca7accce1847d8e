"""Notes on items and the lead's item actions: flags from annotators, comments, gold, sending an item back.

Rules:
- An annotator flags only an item they were served (they hold or held an assignment on it), with 1-2000 characters.
  A flag stays open until a lead resolves it; the dashboard's review queue lists open flags.
- Only leads comment, resolve flags, set or correct gold and send items back (the views reach the project through
  projects.selectors.project_get_for_lead first; these services check the role again).
- Gold is a stored response position or TIE (or None to clear it). Gold feeds the annotators' expertise weights and
  the LLM-vs-gold figure, so changing it bumps ``Project.settings_version`` and recomputes the whole project, the
  same path as a figure-relevant settings change: the dashboard says "stale" until the figures follow.
- Sending back asks for ``more`` further labels (1-10) from people who have not labelled the item yet:
  ``Item.extra_labels`` is raised so that the item wants ``annotation_count + more`` labels. The queue keeps its
  rule (fewest labels first): a sent-back item is served to an annotator once no item with fewer labels fits them.
  Only while the project collects (a handed-off or closed project serves nothing).
Every action records a note, so the item's page keeps its history.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Assignment, ItemNote
from config import events
from projects.models import TIE, Item, Membership, Project

NOTE_MAX_CHARS = 2000
SEND_BACK_MAX = 10


def _check_text(text: str) -> str:
    text = (text or "").strip()
    if not text:
        raise ValidationError({"text": "Write what the lead should know (a few words are enough)."})
    if len(text) > NOTE_MAX_CHARS:
        raise ValidationError({"text": f"At most {NOTE_MAX_CHARS} characters ({len(text)} given)."})
    return text


def _check_lead(*, project: Project, user: AbstractBaseUser) -> None:
    if getattr(user, "is_superuser", False):
        return
    if not Membership.objects.filter(project=project, user_id=user.pk, role=Membership.Role.LEAD).exists():
        raise ValidationError({"user": "Only a lead of this project can do this."})


def _check_item(*, project: Project, item: Item) -> None:
    if item.project_id != project.pk:
        raise ValidationError({"item": "This item does not belong to this project."})


def _position_name(position: int | None) -> str:
    if position is None:
        return "none"
    return "tie" if position == TIE else f"Response {position + 1}"


@transaction.atomic
def item_flag_create(*, project: Project, item: Item, annotator: AbstractBaseUser, text: str) -> ItemNote:
    _check_item(project=project, item=item)
    text = _check_text(text)
    served = Assignment.objects.filter(project=project, item=item, annotator_id=annotator.pk).exists()
    if not served:
        raise ValidationError({"item": "You can flag only items you were given to label."})
    return ItemNote.objects.create(
        project=project, item=item, author_id=annotator.pk, kind=ItemNote.Kind.FLAG, text=text
    )


def _lead_comment(*, project: Project, item: Item, lead: AbstractBaseUser, text: str) -> ItemNote:
    """A lead's note on the item: their own comment, or the record of an action they took on it."""
    return ItemNote.objects.create(project=project, item=item, author_id=lead.pk, kind=ItemNote.Kind.COMMENT, text=text)


@transaction.atomic
def item_comment_create(*, project: Project, item: Item, lead: AbstractBaseUser, text: str) -> ItemNote:
    _check_lead(project=project, user=lead)
    _check_item(project=project, item=item)
    return _lead_comment(project=project, item=item, lead=lead, text=_check_text(text))


@transaction.atomic
def item_flag_resolve(*, project: Project, note_id: int, lead: AbstractBaseUser) -> ItemNote:
    _check_lead(project=project, user=lead)
    note = ItemNote.objects.select_for_update().filter(pk=note_id, project=project, kind=ItemNote.Kind.FLAG).first()
    if note is None:
        raise ValidationError({"note": "No such flag in this project."})
    if note.resolved_at is not None:
        raise ValidationError({"note": "This flag is already resolved."})
    note.resolved_at = timezone.now()
    note.resolved_by_id = lead.pk
    note.save(update_fields=["resolved_at", "resolved_by"])
    return note


@transaction.atomic
def item_gold_set(*, project: Project, item: Item, lead: AbstractBaseUser, gold_position: int | None) -> Item:
    _check_lead(project=project, user=lead)
    _check_item(project=project, item=item)
    positions = set(item.responses.values_list("position", flat=True))
    if gold_position is not None and gold_position != TIE and gold_position not in positions:
        raise ValidationError({"gold_position": "Gold must be one of the item's responses, a tie, or none."})
    item = Item.objects.select_for_update().get(pk=item.pk)
    if item.gold_position == gold_position:
        return item
    before = item.gold_position
    item.gold_position = gold_position
    item.save(update_fields=["gold_position", "updated_at"])
    Project.objects.filter(pk=project.pk).update(settings_version=F("settings_version") + 1)
    _lead_comment(
        project=project,
        item=item,
        lead=lead,
        text=f"Gold {'set' if before is None else 'corrected'}: {_position_name(before)} → "
        f"{_position_name(gold_position)}.",
    )
    events.settings_changed(project_id=project.pk)
    return item


@transaction.atomic
def item_send_back(*, project: Project, item: Item, lead: AbstractBaseUser, more: int, reason: str = "") -> Item:
    _check_lead(project=project, user=lead)
    _check_item(project=project, item=item)
    if not 1 <= more <= SEND_BACK_MAX:
        raise ValidationError({"more": f"Ask for 1 to {SEND_BACK_MAX} more labels."})
    if project.phase != Project.Phase.COLLECTING:
        phase = project.get_phase_display().lower()
        raise ValidationError({"more": f"The project is {phase}: nothing is served until labelling resumes."})
    item = Item.objects.select_for_update().get(pk=item.pk)
    wanted = item.annotation_count + more
    item.extra_labels = max(item.extra_labels, wanted - project.overlap, 0)
    item.save(update_fields=["extra_labels", "updated_at"])
    reason = (reason or "").strip()
    _lead_comment(
        project=project,
        item=item,
        lead=lead,
        text=f"Sent back for {more} more label{'s' if more != 1 else ''}"
        + (f": {_check_text(reason)}" if reason else "."),
    )
    return item
