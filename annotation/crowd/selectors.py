"""Reads for study links and their participants: the link behind a token, attention checks, per-participant records.

A study link is reached by its token alone (the token is the credential, as on crowd platforms); everything a lead
reads about links and participants goes through ``project_get_for_lead``, so outsiders and annotators get 404.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.http import Http404

from annotation.crowd.models import Participant, StudyLink
from annotation.models import Annotation, AnnotationRevision, Assignment
from projects import preference
from projects.models import Item, Project
from projects.selectors import project_get_for_lead

AnyUser = AbstractBaseUser | AnonymousUser

# The browser session remembers which participant it belongs to; a second participant id is refused.
PARTICIPANT_SESSION_KEY = "study_participant_id"


def study_link_get_by_token(*, token: str) -> StudyLink:
    link = StudyLink.objects.filter(token=token).select_related("project").first()
    if link is None:
        raise Http404("No such study link.")
    return link


def study_link_list_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, QuerySet[StudyLink]]:
    project = project_get_for_lead(user=user, project_id=project_id)
    return project, StudyLink.objects.filter(project=project).order_by("-created_at", "-id")


def study_link_get_for_lead(*, user: AnyUser, project_id: int, link_id: int) -> StudyLink:
    project = project_get_for_lead(user=user, project_id=project_id)
    link = StudyLink.objects.filter(pk=link_id, project=project).select_related("project").first()
    if link is None:
        raise Http404("No such study link.")
    return link


def participant_for_session(*, session_participant_id: Any, user: AnyUser) -> Participant | None:
    """The participant this browser session entered as, if the logged-in user is still that participant."""
    if session_participant_id is None or not user.is_authenticated:
        return None
    return (
        Participant.objects.filter(pk=session_participant_id, user_id=user.pk)
        .select_related("link", "link__project", "user")
        .first()
    )


def participant_exists(*, link: StudyLink, external_id: str) -> bool:
    return Participant.objects.filter(link=link, external_id=external_id).exists()


def attention_items(*, link: StudyLink) -> QuerySet[Item]:
    """The link's attention checks: items with gold named by external id, or marked in their metadata if asked."""
    marked = Q(external_id__in=[str(i) for i in link.attention_item_ids])
    if link.attention_from_metadata:
        marked |= Q(metadata__attention_check=True)
    return Item.objects.filter(marked, project_id=link.project_id, gold_position__isnull=False)


@dataclass
class ParticipantRecord:
    """What a participant did, in the figures a platform pays and screens on."""

    labelled: int = 0
    skipped: int = 0
    attention_passed: int = 0
    attention_failed: int = 0
    total_time_ms: int = 0
    median_time_ms: int | None = None  # whole milliseconds, rounded half to even
    attention_skipped: int = 0  # also counted in attention_failed
    # Finished items at which the study ends screened out (None: not over the limit). Not at the failed check itself,
    # which would tell the participant which item was the check, but at the end of that check's window.
    screen_at: int | None = None

    @property
    def finished(self) -> int:
        return self.labelled + self.skipped

    @property
    def attention_seen(self) -> int:
        return self.attention_passed + self.attention_failed

    @property
    def attention_answered(self) -> int:
        """Checks answered with a label (right or wrong); a skipped check is not an answer."""
        return self.attention_seen - self.attention_skipped


def _payload_preferred(*, project: Project, payload: dict[str, Any], weights: dict[str, float]) -> int:
    """The position a stored revision's payload prefers, by the same rule as a saved judgment
    (``annotation_payload_preferred``), read from the revision rather than the label as it stands now."""
    rows = [
        (int(v["response"]), weights.get(str(v["criterion"]), 0.0), int(v["mu"]), int(v["nu"]))
        for v in payload.get("values") or []
    ]
    return preference.preferred_position(
        mode=str(payload.get("mode") or project.mode),
        choice=payload.get("binary_choice"),
        likert_value=payload.get("likert_value"),
        likert_points=project.likert_points,
        values=rows,
        tie_tolerance=project.tie_tolerance,
    )


def _first_check_answers(
    *, project: Project, user_ids: list[int], checks: dict[int, int | None]
) -> dict[tuple[int, int], bool]:
    """(annotator, check item) -> whether the first saved answer matched gold. Later revisions never change the
    verdict: a participant who learns that an answer was wrong cannot go back and fix it."""
    weights = {name: weight for name, weight in project.criteria.values_list("name", "weight")}
    firsts = (
        AnnotationRevision.objects.filter(
            annotation__project=project, annotation__annotator_id__in=user_ids, annotation__item_id__in=list(checks)
        )
        .order_by("annotation_id", "number", "pk")
        .distinct("annotation_id")
        .values_list("annotation__annotator_id", "annotation__item_id", "payload")
    )
    return {
        (annotator_id, item_id): _payload_preferred(project=project, payload=payload, weights=weights)
        == checks[item_id]
        for annotator_id, item_id, payload in firsts
    }


def participant_records(*, link: StudyLink, participants: Iterable[Participant]) -> dict[int, ParticipantRecord]:
    """ParticipantRecord per participant user id, in a few queries.

    An attention check is judged once, on its first outcome: failed when the first saved answer prefers another
    response than gold (a tie is a preference too), or when it was skipped before any answer (a skip would otherwise
    be a free way past the screen; the skip reason stays on the row after a later label). Time is the annotation's
    own time on the page (summed over its revisions), per labelled item. ``screen_at`` is the count of finished
    items at which too many failures end the study: the end of the window of the check that went over the limit.
    """
    user_ids = [p.user_id for p in participants]
    records = {user_id: ParticipantRecord() for user_id in user_ids}
    if not user_ids:
        return records
    project = link.project
    checks = dict(attention_items(link=link).values_list("pk", "gold_position"))
    times: dict[int, list[int]] = {user_id: [] for user_id in user_ids}
    served_checks: dict[int, list[tuple[int, bool]]] = {user_id: [] for user_id in user_ids}
    for annotator_id, item_id, status, skip_reason in (
        Assignment.objects.filter(project=project, annotator_id__in=user_ids)
        .order_by("created_at", "pk")
        .values_list("annotator_id", "item_id", "status", "skip_reason")
    ):
        if status == Assignment.Status.SKIPPED:
            records[annotator_id].skipped += 1
        if item_id in checks and (status in (Assignment.Status.DONE, Assignment.Status.SKIPPED) or skip_reason):
            served_checks[annotator_id].append((item_id, bool(skip_reason)))
    for annotator_id, spent in Annotation.objects.filter(project=project, annotator_id__in=user_ids).values_list(
        "annotator_id", "time_spent_ms"
    ):
        records[annotator_id].labelled += 1
        times[annotator_id].append(spent)
    first_answers = _first_check_answers(project=project, user_ids=user_ids, checks=checks) if checks else {}
    window = link.attention_every + 1
    for user_id, served in served_checks.items():
        record = records[user_id]
        for number, (item_id, skipped) in enumerate(served, start=1):
            passed = first_answers.get((user_id, item_id))
            if skipped or passed is None:
                record.attention_failed += 1
                record.attention_skipped += 1
            elif passed:
                record.attention_passed += 1
            else:
                record.attention_failed += 1
            if record.screen_at is None and record.attention_failed > link.attention_max_failures:
                record.screen_at = number * window
    for user_id, spent_list in times.items():
        records[user_id].total_time_ms = sum(spent_list)
        records[user_id].median_time_ms = round(statistics.median(spent_list)) if spent_list else None
    return records


def participant_record(*, participant: Participant) -> ParticipantRecord:
    return participant_records(link=participant.link, participants=[participant])[participant.user_id]


def api_token_with_user(*, key: str) -> Any:
    """The API token with this key, its user and (if any) the user's participant record, in one query (the model
    looked up by name, so this selector module stays free of the REST framework)."""
    token = apps.get_model("authtoken", "Token")
    return token.objects.select_related("user", "user__study_participant").filter(key=key).first()


def participant_holds_item(*, participant: Participant, item_id: int) -> bool:
    """Whether the participant's queue served this item (claimed now, or labelled or skipped before)."""
    return Assignment.objects.filter(
        project_id=participant.link.project_id, annotator_id=participant.user_id, item_id=item_id
    ).exists()


def quota_count(*, link: StudyLink, record: ParticipantRecord) -> int:
    """The items that count toward the link's quota: saved labels, and skips only if the link says so."""
    return record.labelled + (record.skipped if link.skips_count_toward_quota else 0)


def participant_end_state(*, participant: Participant, record: ParticipantRecord) -> str:
    """How the participant's study stands, decided from their stored saves (never from what a client posted).

    An end already stored is final (screened out, completed, returned): nothing a participant saves afterwards
    moves it. Screened out follows more failed checks than allowed, once the participant finished the window of the
    check that went over (``screen_at``) or reached the quota. Completed needs the quota of counted items and the
    link's minimum of answered attention checks; without a quota, it needs the queue to have run dry (the stored
    status, written only by the queue) and the same minimum.
    """
    link = participant.link
    status = Participant.Status
    if participant.status in (status.RETURNED, status.SCREENED_OUT):
        return str(participant.status)
    quota_met = link.items_per_participant is not None and (
        quota_count(link=link, record=record) >= link.items_per_participant
    )
    if record.screen_at is not None and (record.finished >= record.screen_at or quota_met):
        return status.SCREENED_OUT
    checks_met = record.attention_answered >= link.attention_min_answered
    if link.items_per_participant is not None:
        return status.COMPLETED if quota_met and checks_met and record.screen_at is None else status.ACTIVE
    ended = participant.status == status.COMPLETED and checks_met and record.screen_at is None
    return status.COMPLETED if ended else status.ACTIVE


def participant_is_over(*, participant: Participant) -> bool:
    """Whether the participant's study has ended, stored or decided now from their saves (a save just made may have
    ended it before the queue stored the end)."""
    if participant.status != Participant.Status.ACTIVE:
        return True
    return participant_end_state(participant=participant, record=participant_record(participant=participant)) != (
        Participant.Status.ACTIVE
    )


@dataclass(frozen=True)
class StudyProgress:
    """'Item 3 of 4' for a participant: counted against the link's quota, not the project's items."""

    done: int
    skipped: int
    total: int
    counted: int

    @property
    def current(self) -> int:
        return min(self.counted + 1, max(self.total, 1))

    @property
    def first_visit(self) -> bool:
        return self.done == 0 and self.skipped == 0


def participant_progress(*, participant: Participant, project_items: int) -> StudyProgress:
    record = participant_record(participant=participant)
    link = participant.link
    total = link.items_per_participant if link.items_per_participant is not None else project_items
    counted = quota_count(link=link, record=record)
    if participant.status == Participant.Status.ACTIVE:
        # Served past the quota (a check still due, a link made before its quota had to hold its checks): the count
        # grows with the items rather than reading "Item 4 of 4" for the fifth.
        total = max(total, counted + 1)
    return StudyProgress(done=record.labelled, skipped=record.skipped, total=total, counted=counted)


EXPORT_FIELDS = (
    "participant_id",
    "study_id",
    "session_id",
    "status",
    "started_at",
    "finished_at",
    "items_labelled",
    "skips",
    "total_time_ms",
    "median_time_ms",
    "attention_checks_passed",
    "attention_checks_failed",
    "completion_code_shown",
    "code_shown",
)


def participant_export_rows(*, link: StudyLink, batch_size: int = 500) -> Iterator[dict[str, Any]]:
    """One row per participant of ``link`` (the caller reached it through ``study_link_get_for_lead``).

    ``completion_code_shown`` is true only for a completed participant whose end page showed the completion code;
    ``code_shown`` names which code was shown (the completion, screened-out or return code), empty if none.
    """
    participants = Participant.objects.filter(link=link).order_by("pk")
    last_pk = 0
    while True:
        batch = list(participants.filter(pk__gt=last_pk)[:batch_size])
        if not batch:
            return
        records = participant_records(link=link, participants=batch)
        for participant in batch:
            record = records[participant.user_id]
            shown = ""
            if participant.code_shown_at is not None:
                if participant.status == Participant.Status.COMPLETED:
                    shown = link.completion_code
                elif participant.status == Participant.Status.SCREENED_OUT:
                    shown = link.screened_out_code
                elif participant.status == Participant.Status.RETURNED:
                    shown = link.return_code
            yield {
                "participant_id": participant.external_id,
                "study_id": participant.study_id,
                "session_id": participant.session_id,
                "status": participant.status,
                "started_at": participant.started_at.isoformat(),
                "finished_at": participant.finished_at.isoformat() if participant.finished_at else None,
                "items_labelled": record.labelled,
                "skips": record.skipped,
                "total_time_ms": record.total_time_ms,
                "median_time_ms": record.median_time_ms,
                "attention_checks_passed": record.attention_passed,
                "attention_checks_failed": record.attention_failed,
                "completion_code_shown": bool(shown) and participant.status == Participant.Status.COMPLETED,
                "code_shown": shown,
            }
        last_pk = batch[-1].pk


def study_link_counts(*, links: Iterable[StudyLink]) -> dict[int, dict[str, int]]:
    """Participants per link and status, for the lead's list (one query)."""
    counts: dict[int, dict[str, int]] = {}
    rows = Participant.objects.filter(link__in=list(links)).values("link_id", "status").annotate(n=Count("pk"))
    for row in rows:
        entry = counts.setdefault(row["link_id"], {"total": 0})
        entry["total"] += row["n"]
        entry[row["status"]] = row["n"]
    return counts


def checks_per_participant(*, quota: int, every: int) -> int:
    """The checks a participant meets within a quota of ``quota`` counted items (one in every ``every`` + 1)."""
    return quota // (every + 1)


def check_pool_needed(*, participants: int, quota: int, every: int, overlap: int) -> int:
    """How many check items keep a check from standing out: each check then goes to about as many participants as
    an ordinary item (``overlap``), so no item address recurs across participants more than the others do."""
    each = max(checks_per_participant(quota=quota, every=every), 1)
    return -(-participants * each // max(overlap, 1))


@dataclass(frozen=True)
class CheckPool:
    """A link's attention checks beside how many it needs so that no check stands out across participants."""

    size: int
    needed: int | None  # None: the link names no participant limit or quota, so nothing can be counted

    @property
    def short(self) -> bool:
        return self.needed is not None and self.size < self.needed


def study_link_check_pools(*, links: Iterable[StudyLink]) -> dict[int, CheckPool]:
    """Per link: its check pool and the pool it needs (one count per link; a project has a handful of links)."""
    pools: dict[int, CheckPool] = {}
    for link in links:
        size = attention_items(link=link).count()
        needed = None
        if size and link.max_participants and link.items_per_participant:
            needed = check_pool_needed(
                participants=link.max_participants,
                quota=link.items_per_participant,
                every=link.attention_every,
                overlap=link.project.overlap,
            )
        pools[link.pk] = CheckPool(size=size, needed=needed)
    return pools
