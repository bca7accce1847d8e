"""Every API endpoint × {anonymous, outsider, annotator of another project, study participant, annotator, lead}.

Anonymous callers are refused (401/403); anyone outside the project gets 404 (its ids do not leak); annotators
read the project, its items and their own labels, and nothing else: not the aggregates, the stats, the exports, the
suggestions, the jobs or other annotators' labels; only leads change settings, import or export. Blind items'
suggestions carry a unique marker that must appear in no response an annotator can reach. A study participant of
the project gets 404 everywhere: participants have no API (every URL pattern × method is in
test_participant_permission_matrix.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client, override_settings

from annotation.crowd.selectors import PARTICIPANT_SESSION_KEY
from annotation.models import Annotation
from projects.jobs import job_output_write
from projects.models import Item, Job, Membership
from tests.exports.builders import BLIND_MARKER, SHOWN_MARKER, build_labelled_project
from tests.snapshots import Digest, changes, database_digest

PERSONAS = ("anonymous", "outsider", "other_annotator", "participant", "annotator", "lead")


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str  # formatted with project, item, job, own, theirs
    lead: int
    annotator: int
    body: dict[str, Any] | None = None
    upload: bool = False
    # Not scoped to one project: members of nothing still get an answer.
    global_status: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


ENDPOINTS = [
    Endpoint("project list", "get", "/api/projects/", 200, 200, global_status=200),
    # Creating projects is for staff and accounts granted it (projects.selectors.project_create_allowed); none of the
    # personas is either (tests/api/test_project_creation_is_a_setting.py grants it).
    Endpoint("project create", "post", "/api/projects/", 403, 403, body={"name": "Mine"}, global_status=403),
    Endpoint("project detail", "get", "/api/projects/{project}/", 200, 200),
    Endpoint("project settings", "patch", "/api/projects/{project}/", 200, 404, body={"overlap": 4}),
    Endpoint("criteria read", "get", "/api/projects/{project}/criteria/", 200, 200),
    Endpoint(
        "criteria set", "put", "/api/projects/{project}/criteria/", 200, 404, body=[{"name": "overall", "weight": 1}]
    ),
    Endpoint("member list", "get", "/api/projects/{project}/members/", 200, 404),
    Endpoint(
        "member add",
        "post",
        "/api/projects/{project}/members/",
        201,
        404,
        body={"username": "spare", "role": "annotator"},
    ),
    Endpoint("item list", "get", "/api/projects/{project}/items/", 200, 200),
    Endpoint("item detail", "get", "/api/projects/{project}/items/{item}/", 200, 200),
    Endpoint("blind item detail", "get", "/api/projects/{project}/items/{blind_item}/", 200, 200),
    Endpoint("item import", "post", "/api/projects/{project}/items/import/", 202, 404, upload=True),
    Endpoint("label import", "post", "/api/projects/{project}/labels/import/", 202, 404, upload=True),
    Endpoint("job list", "get", "/api/projects/{project}/jobs/", 200, 404),
    Endpoint("job detail", "get", "/api/jobs/{job}/", 200, 404),
    Endpoint("export download", "get", "/api/jobs/{job}/download/", 200, 404),
    Endpoint("annotation list", "get", "/api/projects/{project}/annotations/", 200, 200),
    Endpoint("own annotation", "get", "/api/projects/{project}/annotations/{own}/", 200, 200),
    Endpoint("other's annotation", "get", "/api/projects/{project}/annotations/{theirs}/", 200, 404),
    Endpoint(
        "edit other's annotation",
        "put",
        "/api/projects/{project}/annotations/{theirs}/",
        404,
        404,
        body={"values": [{"position": 0, "mu": 0.1, "nu": 0.1}, {"position": 1, "mu": 0.1, "nu": 0.1}]},
    ),
    Endpoint(
        "annotate",
        "post",
        "/api/projects/{project}/annotations/",
        400,  # a lead is not an annotator of the project: the service refuses, naming the field
        201,
        body={
            "item": "{unlabelled}",
            "values": [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.2, "nu": 0.6}],
        },
    ),
    Endpoint("stats", "get", "/api/projects/{project}/stats/", 200, 404),
    Endpoint("conclusions", "get", "/api/projects/{project}/conclusions/", 200, 404),
    Endpoint("item aggregates", "get", "/api/projects/{project}/aggregates/items/", 200, 404),
    Endpoint("annotator aggregates", "get", "/api/projects/{project}/aggregates/annotators/", 200, 404),
    Endpoint("suggestions", "get", "/api/projects/{project}/suggestions/", 200, 404),
    Endpoint("export dpo", "get", "/api/projects/{project}/export/?format=dpo", 200, 404),
    Endpoint("export annotations", "get", "/api/projects/{project}/export/?format=annotations", 200, 404),
    Endpoint("export job", "post", "/api/projects/{project}/export/?format=soft", 202, 404),
    # Leads reach the services, which refuse here (too few blind comparisons; not handed off; no LLM configured).
    Endpoint("export card", "get", "/api/projects/{project}/export/card/", 200, 404),
    Endpoint("handoff", "post", "/api/projects/{project}/handoff/", 400, 404, body={}),
    Endpoint("handoff undo", "delete", "/api/projects/{project}/handoff/", 400, 404),
    Endpoint(
        "label requests draw",
        "post",
        "/api/projects/{project}/requests/",
        201,
        404,
        body={"kind": "certification", "size": 2, "labels_per_item": 1},
    ),
    Endpoint("suggestion generation", "post", "/api/projects/{project}/suggestions/generate/", 400, 404, body={}),
    Endpoint("study link list", "get", "/api/projects/{project}/study-links/", 200, 404),
    Endpoint("study link create", "post", "/api/projects/{project}/study-links/", 201, 404, body={"name": "Wave"}),
    Endpoint("study link detail", "get", "/api/projects/{project}/study-links/{link}/", 200, 404),
    Endpoint(
        "study link close", "patch", "/api/projects/{project}/study-links/{link}/", 200, 404, body={"active": False}
    ),
    Endpoint("study participants", "get", "/api/projects/{project}/study-links/{link}/participants/", 200, 404),
    Endpoint("method study read", "get", "/api/projects/{project}/method-study/", 200, 404),
    # The matrix project has labels: a crossover study cannot be planned over them (400), and nobody else may try.
    Endpoint(
        "method study create",
        "post",
        "/api/projects/{project}/method-study/",
        400,
        404,
        body={"methods": ["ifs", "binary"], "annotator_ids": []},
    ),
    Endpoint("method study design", "get", "/api/projects/{project}/method-study/design/", 200, 404),
    Endpoint("method study report", "get", "/api/projects/{project}/method-study/report/", 200, 404),
    Endpoint("imported annotators", "get", "/api/projects/{project}/imported-annotators/", 200, 404),
    Endpoint(
        "imported annotator link",
        "post",
        "/api/projects/{project}/imported-annotators/{identity}/link/",
        200,
        404,
        body={"member": "{spare_member}"},
    ),
]


def _build_world() -> dict[str, Any]:
    """The conftest personas and projects, built here because a module-scoped fixture cannot use function ones."""
    from annotation.crowd.services import ParticipantIds, participant_enter, study_link_create
    from projects.imports.annotators import label_annotators_resolve
    from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory, demo_project_create

    lead, annotator, annotator2 = (UserFactory(username=name) for name in ("lead", "annotator", "annotator2"))
    project = demo_project_create(lead=lead, annotator=annotator, annotator2=annotator2)
    elsewhere = ProjectFactory(name="Elsewhere")
    MembershipFactory(project=elsewhere, user=UserFactory(username="elsewhere"), role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(2, project=elsewhere)
    UserFactory(username="spare")
    UserFactory(username="outsider")  # a member of nothing
    build_labelled_project(project, [annotator, annotator2])
    blind_item = project.items.filter(is_blind=True).order_by("id").first()
    item = project.items.filter(is_blind=False).order_by("id").first()
    unlabelled = Item.objects.create(
        project=project, external_id="fresh", prompt="Fresh", blind_draw=0.9, queue_key=0.5, is_blind=False
    )
    for position in (0, 1):
        unlabelled.responses.create(position=position, text=f"fresh {position}")
    job = Job.objects.create(
        project=project, kind=Job.Kind.EXPORT, status=Job.Status.DONE, result={"filename": "x.jsonl"}
    )
    job_output_write(job_id=job.pk, pieces=['{"a": 1}\n'])
    link = study_link_create(project=project, created_by=lead, name="Matrix")
    participant, _ = participant_enter(link=link, ids=ParticipantIds(participant="pid-matrix"))
    # An imported annotator with no labels, and a member without labels it may be linked to.
    identities, _ = label_annotators_resolve(project=project, usernames=["ext-matrix"])
    spare = UserFactory(username="spare-member")
    MembershipFactory(project=project, user=spare, role=Membership.Role.ANNOTATOR)
    return {
        "identity": identities["ext-matrix"].imported_identity.pk,
        "spare_member": spare.pk,
        "project": project.pk,
        "link": link.pk,
        "item": item.pk,
        "blind_item": blind_item.pk,
        "unlabelled": unlabelled.pk,
        "job": job.pk,
        "own": Annotation.objects.get(item=item, annotator=annotator).pk,
        "theirs": Annotation.objects.get(item=item, annotator=annotator2).pk,
        "users": {
            "anonymous": None,
            "outsider": "outsider",
            "other_annotator": "elsewhere",
            "participant": participant.user.username,
            "annotator": "annotator",
            "lead": "lead",
        },
        "participant_pk": participant.pk,
    }


@dataclass
class World:
    ids: dict[str, Any]
    digest: Digest  # every table as built: each case starts from exactly this
    wrote: bool = False  # the last case sent a write: the next one checks it left nothing behind


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
    """Built once for the module, inside a transaction rolled back at its end (it was rebuilt for every case).

    Each test still asks for ``db``, whose transaction nests as a savepoint inside this one and is rolled back
    after the test, so the writing cases (create, import, annotate, close a link) leave the world as they found it;
    ``world`` checks that against the digest of every table taken here.
    """
    media = override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("matrix-media"))
    with django_db_blocker.unblock(), media, transaction.atomic():
        ids = _build_world()
        yield World(ids=ids, digest=database_digest())
        transaction.set_rollback(True)


@pytest.fixture
def world(shared_world, db) -> dict[str, Any]:
    if shared_world.wrote:
        leaked = changes(shared_world.digest, database_digest())
        assert not leaked, f"the last writing case's changes outlived it: {leaked}"
        shared_world.wrote = False
    return shared_world.ids


def _client(world: dict[str, Any], persona: str, django_user_model) -> Client:
    client = Client()
    username = world["users"][persona]
    if username is not None:
        client.force_login(django_user_model.objects.get(username=username))
    if persona == "participant":  # as its study link logs it in: the session names the participant
        session = client.session
        session[PARTICIPANT_SESSION_KEY] = world["participant_pk"]
        session.save()
    return client


def _fill(value: Any, world: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in world:
        return world[value[1:-1]]
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, world) for v in value]
    return value


def call(client: Client, endpoint: Endpoint, world: dict[str, Any]):
    path = endpoint.path.format(**{k: v for k, v in world.items() if not isinstance(v, dict)})
    method = getattr(client, endpoint.method)
    if endpoint.upload:
        return method(
            path, {"file": SimpleUploadedFile("rows.jsonl", b'{"id": "u1", "prompt": "p", "responses": ["a", "b"]}\n')}
        )
    if endpoint.body is not None:
        return method(path, json.dumps(_fill(endpoint.body, world)), content_type="application/json")
    return method(path)


def content(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def expected_status(endpoint: Endpoint, persona: str) -> set[int]:
    if persona == "anonymous":
        return {401, 403}
    if persona == "participant":
        return {404}
    if persona in ("outsider", "other_annotator"):
        return {endpoint.global_status} if endpoint.global_status else {404}
    return {endpoint.lead if persona == "lead" else endpoint.annotator}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.name for e in ENDPOINTS])
def test_permission_matrix(endpoint, persona, shared_world, world, django_user_model):
    client = _client(world, persona, django_user_model)
    writes = endpoint.method != "get"
    shared_world.wrote |= writes
    before = database_digest() if writes else {}  # after the login, which records its time on the user
    response = call(client, endpoint, world)

    assert response.status_code in expected_status(endpoint, persona), content(response)[:300]
    body = content(response)
    if writes:
        changed = changes(before, database_digest())
        if response.status_code >= 400:
            assert not changed, f"a refused {endpoint.method.upper()} ({response.status_code}) changed {changed}"
        else:
            assert changed, "an accepted write changed nothing: the digest would not see a leak either"
    if persona != "lead":
        assert BLIND_MARKER not in body
        assert SHOWN_MARKER not in body  # the API never sends annotators a suggestion (the page records exposures)
    if persona in ("outsider", "other_annotator", "anonymous", "participant"):
        assert "Question" not in body  # no prompt of the project reaches anyone outside it


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.method == "get"], ids=lambda e: e.name)
def test_leads_do_see_the_marker_where_suggestions_belong(endpoint, world, django_user_model):
    """The marker is findable: the annotator assertions above would catch a leak, not pass by accident."""
    body = content(call(_client(world, "lead", django_user_model), endpoint, world))
    if endpoint.name in ("item list", "blind item detail", "suggestions"):
        assert BLIND_MARKER in body


def test_annotator_responses_hold_no_blind_flag_or_other_labels(world, django_user_model):
    client = _client(world, "annotator", django_user_model)
    items = client.get(f"/api/projects/{world['project']}/items/").json()["results"]
    labels = client.get(f"/api/projects/{world['project']}/annotations/").json()["results"]

    assert all("is_blind" not in item and "suggestion" not in item for item in items)
    assert {label["annotator"] for label in labels} == {"annotator"}


def test_the_digest_sees_a_write_and_its_rollback(shared_world, world):
    """The checks above can fail: a change inside a case shows in the digest, and is gone once rolled back."""
    assert not changes(shared_world.digest, database_digest()), "the world differs from the one built"
    with transaction.atomic():
        Annotation.objects.filter(pk=world["theirs"]).update(time_spent_ms=12345)
        assert set(changes(shared_world.digest, database_digest())) == {Annotation._meta.db_table}
        transaction.set_rollback(True)
    assert not changes(shared_world.digest, database_digest())
