"""Writes for study links: creating links, letting a crowd participant in, serving their queue, ending it.

A participant arrives from a crowd platform (Prolific names the parameters ``PROLIFIC_PID``, ``STUDY_ID`` and
``SESSION_ID``; other platforms can use ``participant``, ``study`` and ``session``). The first visit makes a Django
user with an unusable password, an annotator membership and a Participant row; later visits with the same id resume.
Their items come from the normal queue, with the link's attention checks mixed in: one in every window of
``attention_every`` + 1 items, at a place in the window drawn from the participant's seed (so a check is not always
the N-th item, and the same participant sees the same order after a reload). The study ends completed when the
quota and the minimum of answered checks are met (``study_selectors.participant_end_state``, decided from stored
saves), screened out after more than ``attention_max_failures`` checks went against gold, or returned when the
participant stops or the queue runs dry before the rules are met.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.claims import assignment_claim_again
from annotation.crowd.models import Participant, StudyLink
from annotation.crowd.selectors import (
    attention_items,
    checks_per_participant,
    participant_end_state,
    participant_record,
    quota_count,
)
from annotation.models import Assignment
from annotation.queue.services import assignment_claim_next
from config.input_limits import whole_number
from config.language import language_supported, settings_languages
from projects.models import Item, Membership, Project

ID_MAX_LENGTH = 64
CODE_MAX_LENGTH = 64
_ID_CHARSET = re.compile(r"[A-Za-z0-9_-]+")
_CODE_CHARSET = re.compile(r"[A-Za-z0-9_-]+")
_COMPLETION_URL = re.compile(r"https://[^\s<>\"']+")
# Each id is read from the first of its names that is present: the platform's name first, then the generic one.
ID_PARAMETERS = {
    "participant": ("PROLIFIC_PID", "participant"),
    "study": ("STUDY_ID", "study"),
    "session": ("SESSION_ID", "session"),
}


@dataclass(frozen=True)
class ParticipantIds:
    participant: str
    study: str = ""
    session: str = ""


# --- links ------------------------------------------------------------------------------------------------------


def _whole(raw: Any, *, low: int, high: int, field: str, errors: dict[str, str], allow_none: bool) -> int | None:
    if raw is None or raw == "":
        if not allow_none:
            errors[field] = "Expected a whole number."
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        errors[field] = "Expected a whole number."
        return None
    value = whole_number(str(raw))
    if value is None or not low <= value <= high:
        errors[field] = f"Expected a whole number from {low} to {high}."
        return None
    return value


def _code(raw: Any, *, field: str, errors: dict[str, str]) -> str:
    code = str(raw or "").strip()
    if code and (len(code) > CODE_MAX_LENGTH or not _CODE_CHARSET.fullmatch(code)):
        errors[field] = f"Use up to {CODE_MAX_LENGTH} letters, digits, '-' or '_'."
    return code


@transaction.atomic
def study_link_create(
    *,
    project: Project,
    created_by: AbstractBaseUser | AnonymousUser | None,
    name: str,
    completion_code: str = "",
    screened_out_code: str = "",
    max_participants: Any = None,
    items_per_participant: Any = None,
    attention_item_ids: Sequence[str] = (),
    attention_from_metadata: bool = False,
    attention_every: Any = 5,
    attention_max_failures: Any = 0,
    attention_min_answered: Any = 0,
    skips_count_toward_quota: bool = False,
    consent_text: str = "",
    completion_url: str = "",
    return_code: str = "",
    language: str = "",
) -> StudyLink:
    """A new active link with an unguessable token; an empty completion code gets a random one.

    Validated first, each kind of field by its own step, every refusal named by field; then written."""
    errors: dict[str, str] = {}
    texts = _link_texts_check(
        name=name,
        completion_code=completion_code,
        screened_out_code=screened_out_code,
        return_code=return_code,
        completion_url=completion_url,
        consent_text=consent_text,
        language=language,
        errors=errors,
    )
    numbers = _link_numbers_check(
        max_participants=max_participants,
        items_per_participant=items_per_participant,
        attention_every=attention_every,
        attention_max_failures=attention_max_failures,
        attention_min_answered=attention_min_answered,
        errors=errors,
    )
    wanted = _attention_items_check(project=project, attention_item_ids=attention_item_ids, errors=errors)
    if not isinstance(skips_count_toward_quota, bool):
        errors["skips_count_toward_quota"] = "Expected true or false."
    if numbers.min_answered and "attention_item_ids" not in errors and not wanted and not attention_from_metadata:
        errors["attention_min_answered"] = "A minimum of answered checks needs attention checks on the link."
    if errors:
        raise ValidationError(errors)
    return StudyLink.objects.create(
        project=project,
        name=texts.name,
        token=secrets.token_urlsafe(24),
        completion_code=texts.completion or secrets.token_hex(4).upper(),
        screened_out_code=texts.screened,
        max_participants=numbers.limit,
        items_per_participant=numbers.quota,
        attention_item_ids=wanted,
        attention_from_metadata=bool(attention_from_metadata),
        attention_every=numbers.every or 5,
        attention_max_failures=numbers.failures or 0,
        attention_min_answered=numbers.min_answered or 0,
        skips_count_toward_quota=skips_count_toward_quota,
        consent_text=texts.consent_text,
        language=texts.language,
        completion_url=texts.completion_url,
        return_code=texts.returned,
        created_by_id=created_by.pk if created_by is not None and created_by.is_authenticated else None,
    )


class _LinkTexts(NamedTuple):
    name: str
    completion: str
    screened: str
    returned: str
    completion_url: str
    consent_text: str
    language: str


class _LinkNumbers(NamedTuple):
    limit: int | None
    quota: int | None
    every: int | None
    failures: int | None
    min_answered: int | None


def _link_texts_check(
    *,
    name: str,
    completion_code: str,
    screened_out_code: str,
    return_code: str,
    completion_url: str,
    consent_text: str,
    language: str,
    errors: dict[str, str],
) -> _LinkTexts:
    name = (name or "").strip()
    if not name:
        errors["name"] = "A study link needs a name."
    elif len(name) > 200:
        errors["name"] = "Keep the name under 200 characters."
    completion = _code(completion_code, field="completion_code", errors=errors)
    screened = _code(screened_out_code, field="screened_out_code", errors=errors)
    if completion and completion == screened:
        errors["screened_out_code"] = "The screened-out code must differ from the completion code."
    returned = _code(return_code, field="return_code", errors=errors)
    if returned and returned in (completion, screened):
        errors["return_code"] = "The return code must differ from the completion and screened-out codes."
    completion_url = (completion_url or "").strip()
    if completion_url and (len(completion_url) > 500 or not _COMPLETION_URL.fullmatch(completion_url)):
        errors["completion_url"] = (
            "Expected an https:// address without spaces, e.g. https://app.prolific.com/submissions/complete?cc={code}."
        )
    consent_text = (consent_text or "").strip()
    if len(consent_text) > 20_000:
        errors["consent_text"] = "Keep the consent text under 20,000 characters."
    language = (language or "").strip()
    if language and language_supported(language) != language:
        errors["language"] = f"Unknown language {language[:20]!r}: expected one of {', '.join(settings_languages())}."
    return _LinkTexts(name, completion, screened, returned, completion_url, consent_text, language)


def _link_numbers_check(
    *,
    max_participants: Any,
    items_per_participant: Any,
    attention_every: Any,
    attention_max_failures: Any,
    attention_min_answered: Any,
    errors: dict[str, str],
) -> _LinkNumbers:
    limit = _whole(max_participants, low=1, high=1_000_000, field="max_participants", errors=errors, allow_none=True)
    quota = _whole(
        items_per_participant, low=1, high=1_000_000, field="items_per_participant", errors=errors, allow_none=True
    )
    every = _whole(attention_every, low=1, high=10_000, field="attention_every", errors=errors, allow_none=False)
    failures = _whole(
        attention_max_failures, low=0, high=10_000, field="attention_max_failures", errors=errors, allow_none=False
    )
    min_answered = _whole(
        attention_min_answered, low=0, high=10_000, field="attention_min_answered", errors=errors, allow_none=False
    )
    if min_answered and quota is not None and every:
        problem = _quota_holds_checks_problem(quota=quota, every=every, min_answered=min_answered)
        if problem:
            errors["attention_min_answered"] = problem
    return _LinkNumbers(limit, quota, every, failures, min_answered)


def _quota_holds_checks_problem(*, quota: int, every: int, min_answered: int) -> str:
    """Why a quota cannot hold the checks it must answer (naming the fix), or an empty string."""
    if min_answered > quota:
        return "The minimum of answered checks cannot exceed the item quota."
    held = checks_per_participant(quota=quota, every=every)
    if min_answered <= held:
        return ""
    return (
        f"A quota of {quota} items with one check in every {every + 1} holds {held} check"
        f"{'' if held == 1 else 's'}, fewer than the minimum of {min_answered}: raise the quota to at least "
        f"{min_answered * (every + 1)}"
        + (
            f", check more often (one check after every {quota // min_answered - 1} items or fewer)"
            if quota // min_answered >= 2
            else ""
        )
        + " or lower the minimum."
    )


def _attention_items_check(*, project: Project, attention_item_ids: Sequence[str], errors: dict[str, str]) -> list[str]:
    """The named attention items without repeats, each an item of the project with gold."""
    if isinstance(attention_item_ids, str) or not all(isinstance(i, str) for i in attention_item_ids):
        errors["attention_item_ids"] = "Expected a list of item external ids."
        return []
    wanted = list(dict.fromkeys(i.strip() for i in attention_item_ids if i.strip()))
    if not wanted:
        return wanted
    found = dict(
        Item.objects.filter(project=project, external_id__in=wanted).values_list("external_id", "gold_position")
    )
    missing = [i for i in wanted if i not in found]
    no_gold = [i for i in wanted if i in found and found[i] is None]
    if missing:
        errors["attention_item_ids"] = f"No item with these ids in the project: {', '.join(missing[:10])}."
    elif no_gold:
        errors["attention_item_ids"] = f"Attention checks need gold; these items have none: {', '.join(no_gold[:10])}."
    return wanted


@transaction.atomic
def study_link_set_active(*, link: StudyLink, active: bool) -> StudyLink:
    if not isinstance(active, bool):
        raise ValidationError({"active": "Expected true or false."})
    StudyLink.objects.filter(pk=link.pk).update(active=active)
    link.active = active
    return link


# --- arriving -----------------------------------------------------------------------------------------------------


def check_participant_ids(*, params: Mapping[str, Any]) -> ParticipantIds:
    """The ids from a study URL's query, validated; each problem is named with the parameter it came from."""
    errors: dict[str, str] = {}
    found: dict[str, str] = {}
    for key, names in ID_PARAMETERS.items():
        name = next((n for n in names if params.get(n) not in (None, "")), names[0])
        value = str(params.get(name) or "").strip()
        found[key] = value
        if not value:
            if key == "participant":
                errors[name] = gettext("The link needs a participant id (PROLIFIC_PID or participant); none was given.")
            continue
        if len(value) > ID_MAX_LENGTH:
            errors[name] = f"{name} is too long ({len(value)} characters; at most {ID_MAX_LENGTH})."
        elif not _ID_CHARSET.fullmatch(value):
            errors[name] = f"{name} may only contain letters, digits, '-' and '_'."
    if errors:
        raise ValidationError(errors)
    return ParticipantIds(participant=found["participant"], study=found["study"], session=found["session"])


def _username(link: StudyLink, participant_id: str) -> str:
    base = f"study{link.pk}-{participant_id}"[:140]
    user_model = get_user_model()
    username = base
    # A registered account might already carry this name; a participant never takes over someone's account.
    while user_model.objects.filter(username=username).exists():
        username = f"{base}-{secrets.token_hex(3)}"
    return username


@transaction.atomic
def participant_enter(*, link: StudyLink, ids: ParticipantIds) -> tuple[Participant, bool]:
    """The participant for ``ids`` on ``link``, created on the first visit; (participant, created).

    A returning participant may resume even when the link is closed or full; only newcomers are refused then.
    """
    link = StudyLink.objects.select_for_update().select_related("project").get(pk=link.pk)
    existing = Participant.objects.filter(link=link, external_id=ids.participant).select_related("user").first()
    if existing is not None:
        return existing, False
    if not link.active:
        raise ValidationError({"__all__": gettext("This study is closed and takes no new participants.")})
    if link.project.phase != Project.Phase.COLLECTING:
        raise ValidationError({"__all__": gettext("This study is no longer collecting labels.")})
    if link.max_participants is not None and link.participants.count() >= link.max_participants:
        raise ValidationError({"__all__": gettext("This study is full: it has all the participants it needs.")})
    user_model = get_user_model()
    user = user_model(username=_username(link, ids.participant))
    user.set_unusable_password()
    user.save()
    Membership.objects.create(project=link.project, user=user, role=Membership.Role.ANNOTATOR)
    participant = Participant.objects.create(
        link=link,
        user=user,
        external_id=ids.participant,
        study_id=ids.study,
        session_id=ids.session,
        check_seed=secrets.randbits(62),
    )
    return participant, True


# --- the participant's queue ------------------------------------------------------------------------------------


def _claim_check(*, project: Project, item: Item, annotator: AbstractBaseUser) -> Assignment:
    """A claim on an attention check whatever its overlap: every participant must see the checks they are due.

    Written here rather than through assignment_claim_item, whose room rule would refuse a check that already has
    all its labels.
    """
    return assignment_claim_again(project=project, item=item, annotator=annotator, now=timezone.now())


def _finish(*, participant: Participant, status: str) -> None:
    participant.status = status
    participant.finished_at = timezone.now()
    participant.save(update_fields=["status", "finished_at"])


def check_slot(*, seed: int, window: int, index: int) -> int:
    """Where in window ``index`` (of ``window`` items) this participant's attention check falls: 0 to window-1."""
    digest = hashlib.sha256(f"{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % window


def checks_due(*, seed: int, every: int, finished: int) -> int:
    """How many checks should have been served before item number ``finished`` + 1: one per window of
    ``every`` + 1 items, at the window's drawn place. Pure, so the order is the same after every reload."""
    window = every + 1
    index, offset = divmod(finished, window)
    return index + (1 if offset >= check_slot(seed=seed, window=window, index=index) else 0)


def check_order(*, seed: int, check_ids: Sequence[int]) -> list[int]:
    """The participant's own order of the link's checks, drawn from their seed: two participants meet the checks in
    different orders (and, with a pool larger than the checks each one meets, mostly different checks), so comparing
    item addresses does not single the checks out. Pure, so a reload gives the same order."""
    return sorted(check_ids, key=lambda pk: hashlib.sha256(f"{seed}:check:{pk}".encode()).digest())


def _unfinished_check(*, user: AbstractBaseUser, check_ids: list[int]) -> int | None:
    finished = set(
        Assignment.objects.filter(
            annotator_id=user.pk, item_id__in=check_ids, status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED]
        ).values_list("item_id", flat=True)
    )
    return next((pk for pk in check_ids if pk not in finished), None)


@transaction.atomic
def participant_claim_next(*, participant: Participant) -> Assignment | None:
    """The participant's next item, or None when their study is over (the status then says how it ended).

    Order of the rules: a live claim is served again (a reload shows the same item); the end state decided from
    the stored saves ends it (screened out, completed); a due attention check comes next; then the normal queue.
    When the normal queue is empty, checks still unanswered are served while the link's minimum is unmet; then the
    study ends completed (no quota, minimum met) or returned (the rules cannot be met any more). The normal queue is
    ``annotation.queue.services.next_item_decide`` (through ``assignment_claim_next``), with the checks excluded.
    """
    participant = Participant.objects.select_for_update().select_related("link__project", "user").get(pk=participant.pk)
    if participant.status != Participant.Status.ACTIVE:
        return None
    link, user = participant.link, participant.user
    project = link.project
    now = timezone.now()
    live = (
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.CLAIMED, expires_at__gt=now)
        .select_related("item")
        .order_by("-claimed_at", "-pk")
        .first()
    )
    if live is not None:
        return live
    record = participant_record(participant=participant)
    state = participant_end_state(participant=participant, record=record)
    if state != Participant.Status.ACTIVE:
        _finish(participant=participant, status=state)
        return None
    check_ids = check_order(
        seed=participant.check_seed, check_ids=list(attention_items(link=link).values_list("pk", flat=True))
    )
    quota_met = link.items_per_participant is not None and (
        quota_count(link=link, record=record) >= link.items_per_participant
    )
    if check_ids and quota_met:
        # The quota is met but the minimum of answered checks is not: the checks still due come now, not more items.
        due = _unfinished_check(user=user, check_ids=check_ids)
        if due is not None:
            return _claim_check(project=project, item=Item.objects.get(pk=due), annotator=user)
        _finish(participant=participant, status=Participant.Status.RETURNED)
        return None
    if check_ids and record.attention_seen < checks_due(
        seed=participant.check_seed, every=link.attention_every, finished=record.finished
    ):
        due = _unfinished_check(user=user, check_ids=check_ids)
        if due is not None:
            return _claim_check(project=project, item=Item.objects.get(pk=due), annotator=user)
    assignment = assignment_claim_next(project=project, annotator=user, exclude_item_ids=check_ids)
    if assignment is not None:
        return assignment
    if check_ids and record.attention_answered < link.attention_min_answered:
        due = _unfinished_check(user=user, check_ids=check_ids)
        if due is not None:
            return _claim_check(project=project, item=Item.objects.get(pk=due), annotator=user)
    checks_met = record.attention_answered >= link.attention_min_answered
    if record.screen_at is not None:
        ended: str | None = Participant.Status.SCREENED_OUT
    elif link.items_per_participant is None and checks_met:
        ended = Participant.Status.COMPLETED
    else:
        ended = None
    _finish(participant=participant, status=ended or Participant.Status.RETURNED)
    return None


@transaction.atomic
def participant_return(*, participant: Participant) -> Participant:
    """The participant stops before the end (a platform's "return"): recorded once; a finished study stays as it
    ended."""
    updated = Participant.objects.filter(pk=participant.pk, status=Participant.Status.ACTIVE).update(
        status=Participant.Status.RETURNED, finished_at=timezone.now()
    )
    if updated:
        participant.refresh_from_db(fields=["status", "finished_at"])
    return participant


@transaction.atomic
def participant_settle(*, participant: Participant) -> Participant:
    """The participant's end state decided from their stored saves and stored if it ended the study (the end page
    and every participant's save call this, so what they see never depends on what a client posted).

    An end once stored is final: a screened-out or returned participant stays so whatever is saved afterwards, and
    checks are judged on their first answer, so no later revision can earn a different end. The one exception is a
    stored completion that the saves do not support and that never showed its code (written outside the queue):
    the study goes on, so no unearned code is ever shown.
    """
    participant = Participant.objects.select_for_update().select_related("link__project", "user").get(pk=participant.pk)
    state = participant_end_state(participant=participant, record=participant_record(participant=participant))
    if participant.status == Participant.Status.ACTIVE and state != Participant.Status.ACTIVE:
        _finish(participant=participant, status=state)
    elif (
        participant.status == Participant.Status.COMPLETED
        and state == Participant.Status.ACTIVE
        and participant.code_shown_at is None
    ):
        Participant.objects.filter(pk=participant.pk).update(status=state, finished_at=None)
        participant.status, participant.finished_at = state, None
    return participant


@transaction.atomic
def participant_consent(*, participant: Participant) -> None:
    """The participant agreed to the link's consent text: recorded once, at the first agreement."""
    Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(consented_at=timezone.now())


@transaction.atomic
def participant_code_shown(*, participant: Participant) -> None:
    """The end page showed a code: remembered once, for the pay export."""
    Participant.objects.filter(pk=participant.pk, code_shown_at__isnull=True).exclude(
        status=Participant.Status.ACTIVE
    ).update(code_shown_at=timezone.now())
