"""Study links in the browser: a participant arriving from a crowd platform, their end page, and the lead's list.

The participant labels on the normal annotation page; ``participant_step`` is the one hook the annotation views
call so that a participant's "next item" follows their link's quota and attention checks and ends on the code page.
"""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.crowd import services as study_services
from annotation.crowd import steps
from annotation.crowd.export import CONTENT_TYPES, participant_export_filename, participant_export_lines
from annotation.crowd.gate import participant_after_end, participant_open
from annotation.crowd.limits import study_join_check
from annotation.crowd.models import Participant
from annotation.crowd.selectors import (
    PARTICIPANT_SESSION_KEY,
    attention_items,
    check_pool_needed,
    participant_exists,
    study_link_check_pools,
    study_link_counts,
    study_link_get_by_token,
    study_link_get_for_lead,
    study_link_list_for_lead,
)
from config.client_address import client_address
from projects.selectors import gold_items_for_lead

# Prolific replaces these placeholders with each participant's ids.
PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def _messages(error: ValidationError) -> list[str]:
    if hasattr(error, "error_dict"):
        return [str(m) for messages in error.message_dict.values() for m in messages]
    return [str(m) for m in error.messages]


def _refuse(request: HttpRequest, *, title: str, messages: list[str], status: int) -> HttpResponse:
    return render(request, "study/refused.html", {"title": title, "messages": messages}, status=status)


def _own_participant(request: HttpRequest, token: str) -> Participant:
    link = study_link_get_by_token(token=token)
    participant = steps.session_participant(request)
    if participant is None or participant.link_id != link.pk:
        raise Http404("No such study.")
    return participant


@participant_open
@participant_after_end
@require_GET
def study_enter(request: HttpRequest, token: str) -> HttpResponse:
    """First visit: make the participant and log them in; a revisit with the same id resumes."""
    link = study_link_get_by_token(token=token)
    try:
        ids = study_services.check_participant_ids(params=request.GET)
    except ValidationError as error:
        return _refuse(request, title=gettext("This study link is incomplete"), messages=_messages(error), status=400)
    current = steps.session_participant(request)
    if current is not None:
        if current.link_id != link.pk or current.external_id != ids.participant:
            return _refuse(
                request,
                title=gettext("This browser is already taking part"),
                messages=[
                    gettext(
                        "This browser session belongs to participant %(id)s; a second participant id cannot use it. "
                        "Nothing was created. Use your own browser, or a private window."
                    )
                    % {"id": current.external_id}
                ],
                status=403,
            )
        return redirect(steps.work_url(current))
    if request.user.is_authenticated:
        return _refuse(
            request,
            title=gettext("You are signed in"),
            messages=[
                gettext(
                    "You are signed in as %(name)s. Study links are for participants: open this link in a private "
                    "window. Nothing was created."
                )
                % {"name": request.user.get_username()}
            ],
            status=403,
        )
    if not participant_exists(link=link, external_id=ids.participant):
        refusal = study_join_check(link_id=link.pk, address=client_address(request))
        if refusal is not None:
            response = _refuse(
                request, title=gettext("Please try again shortly"), messages=[refusal.message], status=429
            )
            response["Retry-After"] = str(refusal.retry_after)
            return response
    try:
        participant, _ = study_services.participant_enter(link=link, ids=ids)
    except ValidationError as error:
        return _refuse(request, title=gettext("You cannot join this study"), messages=_messages(error), status=403)
    login(request, participant.user, backend="config.auth.CachedModelBackend")
    request.session[PARTICIPANT_SESSION_KEY] = participant.pk
    return redirect(steps.work_url(participant))


@participant_open
@participant_after_end
@require_http_methods(["GET", "POST"])
def study_consent(request: HttpRequest, token: str) -> HttpResponse:
    """The link's instructions and consent, before the first item; agreeing is recorded once."""
    participant = _own_participant(request, token)
    if not participant.link.consent_text:
        return redirect(steps.annotate_url(participant))
    if request.method == "POST":
        if request.POST.get("agree") != "yes":
            return render(
                request,
                "study/consent.html",
                {
                    "participant": participant,
                    "link": participant.link,
                    "error": gettext("Tick the box to agree first."),
                },
                status=422,
            )
        study_services.participant_consent(participant=participant)
        return redirect(steps.annotate_url(participant))
    return render(request, "study/consent.html", {"participant": participant, "link": participant.link})


@participant_open
@participant_after_end
@require_http_methods(["GET", "POST"])
def study_return(request: HttpRequest, token: str) -> HttpResponse:
    """Stopping before the end, as platforms call it "returning": asks first, then records it and shows the end."""
    participant = _own_participant(request, token)
    if request.method == "POST":
        study_services.participant_return(participant=participant)
        return redirect(steps.end_url(participant))
    if participant.status != Participant.Status.ACTIVE:
        return redirect(steps.end_url(participant))
    return render(request, "study/return.html", {"participant": participant, "link": participant.link})


@participant_open
@participant_after_end
@require_GET
def study_end(request: HttpRequest, token: str) -> HttpResponse:
    """The end page: the state is decided again from the stored saves on every request, and only an earned end
    shows its code."""
    participant = study_services.participant_settle(participant=_own_participant(request, token))
    link = participant.link
    status = Participant.Status
    if participant.status == status.ACTIVE:
        return redirect(steps.work_url(participant))
    code = {
        status.COMPLETED: link.completion_code,
        status.SCREENED_OUT: link.screened_out_code,
        status.RETURNED: link.return_code,
    }[status(participant.status)]
    if code:
        study_services.participant_code_shown(participant=participant)
    completion_url = ""
    if participant.status == status.COMPLETED and link.completion_url:
        completion_url = link.completion_url.replace("{code}", code)
    context = {"participant": participant, "link": link, "code": code, "completion_url": completion_url}
    return render(request, "study/end.html", context)


# --- the lead's page --------------------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def study_links(request: HttpRequest, project_id: int) -> HttpResponse:
    project, links = study_link_list_for_lead(user=request.user, project_id=project_id)
    errors: list[str] = []
    status = 200
    if request.method == "POST":
        try:
            study_services.study_link_create(
                project=project,
                created_by=request.user,
                name=request.POST.get("name", ""),
                completion_code=request.POST.get("completion_code", ""),
                screened_out_code=request.POST.get("screened_out_code", ""),
                max_participants=request.POST.get("max_participants") or None,
                items_per_participant=request.POST.get("items_per_participant") or None,
                attention_item_ids=_attention_ids(request),
                attention_from_metadata=request.POST.get("attention_from_metadata") == "on",
                attention_every=request.POST.get("attention_every") or 5,
                attention_max_failures=request.POST.get("attention_max_failures") or 0,
                attention_min_answered=request.POST.get("attention_min_answered") or 0,
                skips_count_toward_quota=request.POST.get("skips_count_toward_quota") == "on",
                consent_text=request.POST.get("consent_text", ""),
                completion_url=request.POST.get("completion_url", ""),
                return_code=request.POST.get("return_code", ""),
                language=request.POST.get("language", ""),
            )
            return redirect("study_links", project_id=project.pk)
        except ValidationError as error:
            errors, status = _messages(error), 422
    listed = list(links)
    counts = study_link_counts(links=listed)
    pools = study_link_check_pools(links=listed)
    rows = [
        {
            "link": link,
            "url": request.build_absolute_uri(reverse("study_enter", kwargs={"token": link.token}))
            + PROLIFIC_QUERY
            + (f"&lang={link.language}" if link.language else ""),
            "counts": counts.get(link.pk, {}),
            "pool": pools[link.pk],
        }
        for link in listed
    ]
    context = {
        "project": project,
        "rows": rows,
        "errors": errors,
        "posted": request.POST,
        "gold_items": gold_items_for_lead(project=project),
        "picked": set(request.POST.getlist("attention_item")),
        "overlap": project.overlap,
        "example_pool": check_pool_needed(participants=100, quota=4 * 5, every=4, overlap=project.overlap),
    }
    return render(request, "study/links.html", context, status=status)


def _attention_ids(request: HttpRequest) -> list[str]:
    """The gold items ticked in the picker and any external ids typed, each once, in that order."""
    typed = request.POST.get("attention_item_ids", "").replace(",", " ").split()
    return list(dict.fromkeys([*request.POST.getlist("attention_item"), *typed]))


@login_required
@require_GET
def study_link_detail(request: HttpRequest, project_id: int, link_id: int) -> HttpResponse:
    """Every setting of one link, its attention items and its numbers; settings are fixed once the link exists."""
    link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
    context = {
        "project": link.project,
        "link": link,
        "url": request.build_absolute_uri(reverse("study_enter", kwargs={"token": link.token})) + PROLIFIC_QUERY,
        "counts": study_link_counts(links=[link]).get(link.pk, {}),
        "checks": list(attention_items(link=link).only("id", "external_id", "prompt").order_by("external_id")[:300]),
    }
    return render(request, "study/link_detail.html", context)


@login_required
@require_POST
def study_link_active(request: HttpRequest, project_id: int, link_id: int) -> HttpResponse:
    link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
    study_services.study_link_set_active(link=link, active=request.POST.get("active") == "true")
    if request.POST.get("back") == "detail":
        return redirect("study_link_detail", project_id=link.project_id, link_id=link.pk)
    return redirect("study_links", project_id=link.project_id)


@login_required
@require_GET
def study_link_export(request: HttpRequest, project_id: int, link_id: int) -> StreamingHttpResponse:
    link = study_link_get_for_lead(user=request.user, project_id=project_id, link_id=link_id)
    export_format = request.GET.get("as", "csv")
    if export_format not in CONTENT_TYPES:
        raise Http404("Unknown export format.")
    response = StreamingHttpResponse(
        participant_export_lines(link=link, export_format=export_format), content_type=CONTENT_TYPES[export_format]
    )
    filename = participant_export_filename(link=link, export_format=export_format)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
