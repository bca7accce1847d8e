"""A study participant over every URL pattern the resolver knows × every method: only its study's pages answer.

The patterns are enumerated from Django's URL resolver (the API, the pages, the admin, the account pages), not from
a list kept by hand, so an endpoint added later is in the matrix the day it is added, and closed to participants
unless its view is marked ``participant_open``. A closed pattern must answer 404 to every method and change
nothing in the database; the open ones are exactly the study's own pages, and answer 404 for another project or an
item the participant was not served.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from annotation.crowd.gate import OPEN_ATTRIBUTE
from annotation.crowd.selectors import PARTICIPANT_SESSION_KEY
from annotation.crowd.services import (
    ParticipantIds,
    participant_claim_next,
    participant_enter,
    study_link_create,
)
from annotation.models import Annotation
from projects.models import Item, Membership
from tests.snapshots import changes, database_digest

METHODS = ("get", "post", "put", "patch", "delete")
# The study's pages: the entry, its consent, return and end pages, and the annotation page with its own actions;
# and the scripts' translation catalog, which every page loads (no project data in it).
OPEN_TO_PARTICIPANTS = {
    "javascript-catalog",
    "study_enter",
    "study_consent",
    "study_return",
    "study_end",
    "annotate_next",
    "annotate_previous",
    "annotate_item",
    "annotate_skip",
    "annotate_accept",
    "annotate_keep",
}
_ROUTE_PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
_REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?:[^()]|\([^()]*\))*\)")


@dataclass(frozen=True)
class Pattern:
    route: str  # the full route as the resolver spells it, prefixes included
    name: str | None
    callback: Any

    @property
    def is_open(self) -> bool:
        return bool(getattr(self.callback, OPEN_ATTRIBUTE, False))


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[Pattern]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield Pattern(route=prefix + str(entry.pattern), name=entry.name, callback=entry.callback)


PATTERNS = list(_walk(get_resolver().url_patterns))


def concrete_path(route: str, samples: dict[str, Any]) -> str:
    """A path that matches ``route``, with each parameter filled from ``samples`` (route and regex syntax alike)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in samples:
            raise AssertionError(f"add a sample value for URL parameter {name!r} (route {route!r})")
        return str(samples[name])

    path = _REGEX_GROUP.sub(fill, route)  # first: a regex group's "<name>" would look like a route parameter
    path = _ROUTE_PARAMETER.sub(fill, path)
    return "/" + path.replace("^", "").replace("$", "")


@pytest.fixture(scope="module")
def study_world(django_db_setup, django_db_blocker) -> Iterator[dict[str, Any]]:
    """A project with a study link, a participant who labelled one item and holds a claim on the next, and
    another project; built once for the module inside a transaction rolled back at its end."""
    from tests.exports.builders import build_labelled_project
    from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory, demo_project_create

    with django_db_blocker.unblock(), transaction.atomic():
        lead, annotator, annotator2 = (UserFactory(username=name) for name in ("lead", "annotator", "annotator2"))
        project = demo_project_create(lead=lead, annotator=annotator, annotator2=annotator2)
        build_labelled_project(project, [annotator, annotator2])
        elsewhere = ProjectFactory(name="Elsewhere")
        MembershipFactory(project=elsewhere, user=UserFactory(username="elsewhere"), role=Membership.Role.ANNOTATOR)
        foreign_item = ItemFactory(project=elsewhere)
        link = study_link_create(project=project, created_by=lead, name="Matrix")
        participant, _ = participant_enter(link=link, ids=ParticipantIds(participant="pid-matrix"))
        held = participant_claim_next(participant=participant)
        assert held is not None
        unserved = Item.objects.filter(project=project).exclude(pk=held.item_id).order_by("pk").first()
        annotation = Annotation.objects.filter(annotator=annotator).order_by("pk").first()
        samples = {
            "project_id": project.pk,
            "item_id": held.item_id,
            "link_id": link.pk,
            "job_id": 1,
            "note_id": 1,
            "identity_id": 1,
            "user_id": annotator.pk,  # a member: removing them or changing their role must be refused
            "annotation_id": annotation.pk,
            "id": annotation.pk,
            "content_type_id": 1,
            "webhook_id": 1,
            "delivery_id": 1,
            "token": link.token,
            "plot": "alpha",
            "uidb64": "MQ",
            "object_id": 1,
            "app_label": "auth",
            "url": "anything/",
        }
        yield {
            "participant_user_id": participant.user_id,
            "participant_pk": participant.pk,
            "samples": samples,
            "foreign_project": elsewhere.pk,
            "foreign_item": foreign_item.pk,
            "unserved_item": unserved.pk,
        }
        transaction.set_rollback(True)


def participant_client(world: dict[str, Any], django_user_model) -> Client:
    """The participant's browser: logged in by its study link, so its session carries the participant's id."""
    client = Client()
    client.force_login(django_user_model.objects.get(pk=world["participant_user_id"]))
    session = client.session
    session[PARTICIPANT_SESSION_KEY] = world["participant_pk"]
    session.save()
    return client


def test_the_matrix_covers_the_whole_resolver():
    """Every pattern is here, with the API and the admin among them: the enumeration is not silently empty."""
    routes = [p.route for p in PATTERNS]
    assert len(PATTERNS) > 100
    assert any(r.startswith("api/projects/") for r in routes)
    assert any(r.startswith("admin/") for r in routes)
    assert "accounts/login/" in routes


def test_only_the_study_pages_are_marked_open():
    """A new open view is a reviewed decision: it has to be added to OPEN_TO_PARTICIPANTS here."""
    assert {p.name for p in PATTERNS if p.is_open} == OPEN_TO_PARTICIPANTS
    assert all(p.name for p in PATTERNS if p.is_open)


@pytest.mark.parametrize("pattern", [p for p in PATTERNS if not p.is_open], ids=lambda p: p.route)
def test_every_closed_pattern_answers_404_to_a_participant_and_changes_nothing(
    pattern, study_world, db, django_user_model
):
    path = concrete_path(pattern.route, study_world["samples"])
    assert resolve(path).func is pattern.callback, f"{path} does not reach {pattern.route}"
    client = participant_client(study_world, django_user_model)
    before = database_digest()
    for method in METHODS:
        response = getattr(client, method)(path)
        assert response.status_code == 404, f"{method.upper()} {path}: {response.status_code}"
    assert not changes(before, database_digest())


@pytest.mark.parametrize(
    "pattern", [p for p in PATTERNS if p.is_open and "project_id" in p.route], ids=lambda p: p.name
)
def test_open_project_pages_answer_404_for_another_project_or_an_unserved_item(
    pattern, study_world, db, django_user_model
):
    client = participant_client(study_world, django_user_model)
    foreign = concrete_path(
        pattern.route,
        {
            **study_world["samples"],
            "project_id": study_world["foreign_project"],
            "item_id": study_world["foreign_item"],
        },
    )
    statuses = {method: getattr(client, method)(foreign).status_code for method in METHODS}
    assert set(statuses.values()) == {404}, statuses
    if "item_id" in pattern.route:
        unserved = concrete_path(pattern.route, {**study_world["samples"], "item_id": study_world["unserved_item"]})
        statuses = {method: getattr(client, method)(unserved).status_code for method in METHODS}
        assert set(statuses.values()) == {404}, statuses


@pytest.mark.parametrize("pattern", [p for p in PATTERNS if p.is_open], ids=lambda p: p.name)
def test_open_pages_do_answer_the_participant(pattern, study_world, db, django_user_model):
    """The 404s above are the gate's, not a broken world: the same participant reaches its own pages."""
    path = concrete_path(pattern.route, study_world["samples"])
    response = participant_client(study_world, django_user_model).get(path)
    # 400: the entry link without the platform's ids, as the view answers anyone; never the gate's 404.
    assert response.status_code in (200, 302, 400, 405), response.status_code


def test_the_same_paths_answer_a_member(study_world, db, django_user_model):
    """The gate, not the view, refuses the participant: a member of the project opens its dashboard and its API."""
    client = Client()
    client.force_login(django_user_model.objects.get(username="lead"))
    project = study_world["samples"]["project_id"]
    assert client.get(f"/projects/{project}/dashboard/").status_code == 200
    assert client.get(f"/api/projects/{project}/").status_code == 200
    participant = participant_client(study_world, django_user_model)
    assert participant.get(f"/projects/{project}/dashboard/").status_code == 404
    assert participant.get(f"/api/projects/{project}/").status_code == 404
