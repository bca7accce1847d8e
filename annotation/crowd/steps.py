"""The crowd study's hooks into the annotator's page, and where a participant goes next.

The participant labels on the ordinary annotation page: ``participant_step`` is the one call the page makes so that a
participant's "next item" follows their link's quota and attention checks and ends on the code page, and
``study_progress`` counts "Item 3 of 4" against the quota. The study's own pages (annotation.crowd.views) use the
same addresses.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from annotation.crowd import services as study_services
from annotation.crowd.models import Participant
from annotation.crowd.selectors import PARTICIPANT_SESSION_KEY, participant_for_session, participant_progress
from annotation.models import Assignment
from projects.models import Project


def session_participant(request: HttpRequest) -> Participant | None:
    return participant_for_session(
        session_participant_id=request.session.get(PARTICIPANT_SESSION_KEY), user=request.user
    )


def annotate_url(participant: Participant) -> str:
    return reverse("annotate_next", kwargs={"project_id": participant.link.project_id})


def consent_url(participant: Participant) -> str:
    return reverse("study_consent", kwargs={"token": participant.link.token})


def needs_consent(participant: Participant) -> bool:
    return bool(participant.link.consent_text) and participant.consented_at is None


def work_url(participant: Participant) -> str:
    return consent_url(participant) if needs_consent(participant) else annotate_url(participant)


def participant_step(request: HttpRequest, project: Project) -> Assignment | HttpResponse | None:
    """For a participant's session: their next assignment, or a response sending them to the consent or end page.

    None for everyone else (no query is made for them), who get the normal queue.
    """
    if PARTICIPANT_SESSION_KEY not in request.session:
        return None
    participant = session_participant(request)
    if participant is None or participant.link.project_id != project.pk:
        return None
    assignment = None if needs_consent(participant) else study_services.participant_claim_next(participant=participant)
    if assignment is not None:
        return assignment
    target = consent_url(participant) if needs_consent(participant) else end_url(participant)
    if getattr(request, "htmx", False):
        return HttpResponseClientRedirect(target)
    return redirect(target)


def study_progress(request: HttpRequest, project: Project, progress: Any) -> Any:
    """The page's "Item 3 of 4": for a participant, counted against their link's quota; else ``progress`` as is."""
    participant = getattr(request, "study_participant", None)
    if participant is None or participant.link.project_id != project.pk:
        return progress
    return participant_progress(participant=participant, project_items=progress.total)


def end_url(participant: Participant) -> str:
    return reverse("study_end", kwargs={"token": participant.link.token})
