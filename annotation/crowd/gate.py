"""A study participant is its own kind of principal: it reaches its study's pages and nothing else.

A participant is a login-less user whose browser session was opened by its study link (the session carries
``PARTICIPANT_SESSION_KEY``: the only way a participant gets a session, since its password is unusable and it has
no token). The participant keeps an annotator membership, because its labels are ordinary labels of the project,
but the membership is not what decides what it may open: this gate is. It is deny by default: a view is open to
participants only when it is marked with ``participant_open``; every other URL (the REST API, the project list,
other projects, the admin, the account pages, any endpoint added later) answers 404, as if it did not exist. On the
open views, a project id must be the study's project and an item id an item the participant was served.

The API's authentication classes refuse a participant's session and token too, so the API stays closed even if
the middleware were left out of a configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect
from drf_spectacular.authentication import SessionScheme
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.request import Request

from annotation.crowd.models import Participant
from annotation.crowd.selectors import (
    PARTICIPANT_SESSION_KEY,
    api_token_with_user,
    participant_for_session,
    participant_holds_item,
)
from annotation.crowd.services import participant_settle

OPEN_ATTRIBUTE = "participant_open"
AFTER_END_ATTRIBUTE = "participant_after_end"
View = TypeVar("View", bound=Callable[..., Any])


def participant_open(view: View) -> View:
    """Marks a view as part of a participant's study. ``functools.wraps`` copies the mark through the other
    decorators, so it may stand anywhere in the stack."""
    setattr(view, OPEN_ATTRIBUTE, True)
    return view


def participant_after_end(view: View) -> View:
    """Marks a study page that stays open once the participant's study has ended (the end page itself, and the
    pages that only send there). Every other open view answers an ended participant with the end page."""
    setattr(view, AFTER_END_ATTRIBUTE, True)
    return view


def _end_response(request: HttpRequest, participant: Participant) -> HttpResponse:
    target = reverse("study_end", kwargs={"token": participant.link.token})
    if request.headers.get("HX-Request") == "true":
        return HttpResponseClientRedirect(target)
    # 303: a refused POST is answered by a GET of the end page, never by a replay of the save.
    return HttpResponseRedirect(target, status=303 if request.method not in ("GET", "HEAD") else 302)


def request_participant(request: HttpRequest) -> Participant | None:
    """The participant this request's session belongs to; None for everyone else (without a query for them)."""
    session = getattr(request, "session", None)
    if session is None or PARTICIPANT_SESSION_KEY not in session:
        return None
    return participant_for_session(session_participant_id=session.get(PARTICIPANT_SESSION_KEY), user=request.user)


class ParticipantGateMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.study_participant = None  # type: ignore[attr-defined]  # read by the templates' participant header
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        participant = request_participant(request)
        if participant is None:
            return None
        request.study_participant = participant  # type: ignore[attr-defined]
        if not getattr(view_func, OPEN_ATTRIBUTE, False):
            raise Http404("No such page.")
        project_id = view_kwargs.get("project_id")
        if project_id is not None and int(project_id) != participant.link.project_id:
            raise Http404("No such page.")
        item_id = view_kwargs.get("item_id")
        if item_id is not None and not participant_holds_item(participant=participant, item_id=int(item_id)):
            # Only items their queue served: a participant cannot pick the items it labels (and so skip the checks).
            raise Http404("No such item.")
        if getattr(view_func, AFTER_END_ATTRIBUTE, False):
            return None
        if participant.status == Participant.Status.ACTIVE:
            # Every request is judged against the end the earlier saves already reached, even before the queue
            # stored it (a parallel request, a POST straight to an item's address, "previous"): once over, nothing
            # more is shown or taken.
            participant = participant_settle(participant=participant)
            request.study_participant = participant  # type: ignore[attr-defined]
        if participant.status != Participant.Status.ACTIVE:
            return _end_response(request, participant)
        return None


class MemberTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing a participant's token (one query, as before: the participant joins)."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        token = api_token_with_user(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if hasattr(token.user, "study_participant"):
            raise exceptions.AuthenticationFailed("Study participants have no API access.")
        return token.user, token


class MemberSessionAuthentication(SessionAuthentication):
    """DRF's session authentication, refusing a participant's session."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        if PARTICIPANT_SESSION_KEY in request._request.session:
            raise exceptions.NotFound()
        return super().authenticate(request)


class MemberSessionScheme(SessionScheme):
    """The OpenAPI schema describes the subclass as the cookie scheme it is."""

    target_class = "annotation.crowd.gate.MemberSessionAuthentication"
