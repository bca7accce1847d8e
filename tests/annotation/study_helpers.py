"""Helpers for the study-link tests: a participant arriving by URL and labelling through the normal page."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant, StudyLink
from annotation.crowd.services import check_slot
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url, next_url

_DATA_ITEM = re.compile(r'data-item="(\d+)"')


def enter_url(link: StudyLink, pid: str | None = None, **extra: str) -> str:
    url = reverse("study_enter", kwargs={"token": link.token})
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": f"session-{pid}"} if pid else {}
    params.update(extra)
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def enter(client: Client, link: StudyLink, pid: str) -> None:
    response = client.get(enter_url(link, pid))
    assert response.status_code == 302, response.content.decode()[:500]
    assert response["Location"] == next_url(link.project)


def enter_with_checks_last(client: Client, link: StudyLink, pid: str, windows: int = 4) -> None:
    """Enter, then give the participant a seed that puts each of the first ``windows`` checks last in its window:
    the old fixed "after every N items" order, for tests about what follows a check rather than where it falls."""
    enter(client, link, pid)
    window = link.attention_every + 1
    seed = next(
        s
        for s in range(100_000)
        if all(check_slot(seed=s, window=window, index=k) == window - 1 for k in range(windows))
    )
    Participant.objects.filter(link=link, external_id=pid).update(check_seed=seed)


def current_item(client: Client, project: Project) -> Item | None:
    """The item the participant's queue shows now, or None when it sends them to the end page."""
    response = client.get(next_url(project))
    if response.status_code == 302:
        assert "/end/" in response["Location"]
        return None
    assert response.status_code == 200
    found = _DATA_ITEM.search(response.content.decode())
    assert found is not None
    return Item.objects.get(pk=int(found.group(1)))


def label(client: Client, project: Project, item: Item, values: dict[int, tuple[int, int]] | None = None) -> None:
    response = client.post(item_url(project, item), ifs_form(item, values))
    assert response.status_code == 302, response.content.decode()[:800]


def prefer(item: Item, position: int) -> dict[int, tuple[int, int]]:
    """Slider values that prefer the response at ``position`` (for items with two responses)."""
    return {position: (800, 100), 1 - position: (100, 800)}


def end_page(client: Client, link: StudyLink) -> str:
    response = client.get(reverse("study_end", kwargs={"token": link.token}))
    assert response.status_code == 200
    return response.content.decode()
