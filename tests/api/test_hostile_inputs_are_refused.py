"""A catalogue of hostile inputs: every one is refused with a 4xx in the API's JSON error format (the annotation form
answers its 422 page; an import job fails with the bad line's number) and leaves the database unchanged.

The inputs are the ones that used to crash the server (NUL characters, 1e308, 100,000 characters, JSON nested
100,000 deep, a criterion without a weight, an oversized body) and their neighbours, across the settings PATCH,
every JSON body, query parameters, import files and the slider form.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client

from annotation.models import Annotation, AnnotationRevision, JudgmentValue
from projects.models import Criterion, Item, Job, Membership, Project, Response, Suggestion, SuggestionValue

NUL = "a\x00b"
LONG = "x" * 100_000
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000

MAIN_TABLES = (Project, Criterion, Membership, Item, Response, Suggestion, SuggestionValue, Annotation, JudgmentValue)


def _checksum() -> dict[str, tuple[int, str]]:
    """Row count and a digest of every row of the main tables (and users, without their last login)."""
    from django.contrib.auth import get_user_model

    sums = {}
    for model in (*MAIN_TABLES, AnnotationRevision):
        rows = list(model.objects.order_by("pk").values_list())
        sums[model.__name__] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
    users = list(get_user_model().objects.order_by("pk").values_list("pk", "username", "password", "is_active"))
    sums["User"] = (len(users), hashlib.sha256(repr(users).encode()).hexdigest())
    return sums


@dataclass
class Case:
    id: str
    who: str  # "lead" or "annotator"
    method: str
    path: str  # {p} project, {i} item, {a} the annotator's annotation
    body: Any = None  # JSON-able, or bytes sent as they are
    content_type: str = "application/json"


def _json_cases() -> list[Case]:  # noqa: C901
    cases: list[Case] = []
    settings_path = "/api/projects/{p}/"
    for field in ("name", "description", "guidelines", "llm_model", "llm_instruction_template", "llm_api_key"):
        for label, value in (("nul", NUL), ("list", ["x"]), ("object", {"x": 1}), ("number", 7), ("null", None)):
            cases.append(Case(f"settings-{field}-{label}", "lead", "patch", settings_path, {field: value}))
    for field in ("name", "llm_model", "llm_api_key"):
        cases.append(Case(f"settings-{field}-100k", "lead", "patch", settings_path, {field: LONG}))
    numeric = ("blind_rate", "tie_tolerance", "overlap", "likert_points", "weight_consistency", "minimum_blind_sample")
    for field in numeric:
        for label, value in (("1e308", 1e308), ("-1e308", -1e308), ("text", "many"), ("null", None), ("10e30", 10**30)):
            cases.append(Case(f"settings-{field}-{label}", "lead", "patch", settings_path, {field: value}))
    for field in ("mode", "suggestion_display", "aggregation_operator"):
        for label, value in (("nul", NUL), ("list", ["ifs"]), ("object", {"ifs": 1})):
            cases.append(Case(f"settings-{field}-{label}", "lead", "patch", settings_path, {field: value}))
    cases.append(Case("settings-unknown-field", "lead", "patch", settings_path, {"slug": "x"}))
    cases.append(Case("settings-nul-key", "lead", "patch", settings_path, {"na\x00me": "x"}))

    create = "/api/projects/"
    weight = [{"name": "a", "weight": 0.5}, {"name": "b", "weight": 0.5}]
    for label, body in (
        ("name-nul", {"name": NUL}),
        ("name-100k", {"name": LONG}),
        ("name-list", {"name": ["x"]}),
        ("name-null", {"name": None}),
        ("name-missing", {}),
        ("criterion-without-weight", {"name": "x", "criteria": [{"name": "overall"}]}),
        ("criterion-weight-1e308", {"name": "x", "criteria": [{"name": "a", "weight": 1e308}]}),
        ("criterion-weight-text", {"name": "x", "criteria": [{"name": "a", "weight": "heavy"}]}),
        ("criterion-name-nul", {"name": "x", "criteria": [{"name": NUL, "weight": 1}]}),
        ("criterion-name-100k", {"name": "x", "criteria": [{"name": LONG, "weight": 1}]}),
        ("criteria-not-a-list", {"name": "x", "criteria": {"name": "a", "weight": 1}}),
        ("criteria-duplicate", {"name": "x", "criteria": [{"name": "a", "weight": 0.5}, {"name": "a", "weight": 0.5}]}),
        ("criteria-sum", {"name": "x", "criteria": [{"name": "a", "weight": 0.7}, weight[1]]}),
        ("criteria-negative", {"name": "x", "criteria": [{"name": "a", "weight": -1}, {"name": "b", "weight": 2}]}),
        ("settings-not-object", {"name": "x", "settings": ["mode"]}),
        ("settings-unknown", {"name": "x", "settings": {"colour": "red"}}),
        ("settings-overlap-1e308", {"name": "x", "settings": {"overlap": 1e308}}),
        ("settings-description-nul", {"name": "x", "settings": {"description": NUL}}),
        ("settings-name-twice", {"name": "x", "settings": {"name": "y"}}),
    ):
        cases.append(Case(f"create-{label}", "lead", "post", create, body))

    criteria = "/api/projects/{p}/criteria/"
    for label, body in (
        ("without-weight", [{"name": "overall"}]),
        ("weight-1e308", [{"name": "overall", "weight": 1e308}]),
        ("weight-null", [{"name": "overall", "weight": None}]),
        ("name-nul", [{"name": NUL, "weight": 1}]),
        ("name-100k", [{"name": LONG, "weight": 1}]),
        ("empty", []),
        ("object", {"name": "overall", "weight": 1}),
        ("sum", [{"name": "a", "weight": 0.2}]),
    ):
        cases.append(Case(f"criteria-{label}", "lead", "put", criteria, body))

    members = "/api/projects/{p}/members/"
    for label, body in (
        ("username-nul", {"username": NUL, "role": "annotator"}),
        ("username-100k", {"username": LONG, "role": "annotator"}),
        ("username-list", {"username": ["annotator"], "role": "annotator"}),
        ("role-nul", {"username": "annotator", "role": NUL}),
        ("role-unknown", {"username": "annotator", "role": "owner"}),
        ("unknown-user", {"username": "nobody-here", "role": "annotator"}),
    ):
        cases.append(Case(f"members-{label}", "lead", "post", members, body))

    annotations = "/api/projects/{p}/annotations/"

    def save(**change: Any) -> dict[str, Any]:
        values = [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.1, "nu": 0.7}]
        body: dict[str, Any] = {"item": "{i}", "values": values}
        for key, value in change.items():
            if key.startswith("v0_"):
                values[0][key[3:]] = value
            else:
                body[key] = value
        return body

    for label, body in (
        ("mu-1e308", save(v0_mu=1e308)),
        ("mu--1e308", save(v0_mu=-1e308)),
        ("mu-text", save(v0_mu="NaN")),
        ("mu-nul", save(v0_mu=NUL)),
        ("mu-null", save(v0_mu=None)),
        ("nu-over", save(v0_nu=0.9)),
        ("position-10e30", save(v0_position=10**30)),
        ("position-negative", save(v0_position=-1)),
        ("criterion-nul", save(v0_criterion=NUL)),
        ("criterion-100k", save(v0_criterion=LONG)),
        ("criterion-unknown", save(v0_criterion="taste")),
        ("values-not-list", save(values={"mu": 1})),
        ("item-nul", save(item=NUL)),
        ("item-10e30", save(item=10**30)),
        ("item-unknown", save(item=999_999_999)),
        ("time-text", save(time_spent_ms="long")),
        ("time-negative", save(time_spent_ms=-5)),
        ("client-token-nul", save(client_token=NUL)),
        ("client-token-100k", save(client_token=LONG)),
        ("binary-in-ifs", save(binary_choice=10**30)),
    ):
        cases.append(Case(f"annotation-{label}", "annotator", "post", annotations, body))
    for label, body in (
        ("mu-1e308", save(v0_mu=1e308)),
        ("time-nul", save(time_spent_ms=NUL)),
        ("client-token-nul", save(client_token=NUL)),
    ):
        cases.append(Case(f"annotation-edit-{label}", "annotator", "put", "/api/projects/{p}/annotations/{a}/", body))

    bodies = {
        "deep-array": DEEP.encode(),
        "deep-object": DEEP_OBJECT.encode(),
        "not-json": b"{name: x",
        "bad-utf8": b'{"name": "\xff\xfe"}',
        "oversized": b'{"name": "' + b"x" * 3_000_000 + b'"}',
        "nul-escaped-key": b'{"\\u0000": 1}',
        "scalar": b"42",
        "empty": b"",
        "nan": b'{"name": NaN}',
    }
    endpoints = (
        ("create", "lead", "post", create),
        ("settings", "lead", "patch", settings_path),
        ("criteria", "lead", "put", criteria),
        ("members", "lead", "post", members),
        ("annotation", "annotator", "post", annotations),
    )
    for name, who, method, path in endpoints:
        for label, raw in bodies.items():
            if (name, label) == ("settings", "empty"):
                continue  # an empty PATCH is a valid request that changes nothing
            cases.append(Case(f"body-{name}-{label}", who, method, path, raw))
    for name, who, method, path in endpoints[:2]:
        cases.append(Case(f"body-{name}-wrong-type", who, method, path, b"name=x", "text/plain"))
    return cases


def _query_cases() -> list[Case]:
    cases = []
    for path, params in (
        ("/api/projects/{p}/annotations/", {"annotator": NUL}),
        ("/api/projects/{p}/annotations/", {"item": NUL}),
        ("/api/projects/{p}/annotations/", {"cursor": "not-a-cursor"}),
        ("/api/projects/{p}/annotations/", {"page_size": NUL}),
        ("/api/projects/{p}/items/", {"cursor": NUL}),
        ("/api/projects/{p}/items/", {"cursor": LONG}),
        ("/api/projects/{p}/aggregates/items/", {"provenance": NUL}),
        ("/api/projects/{p}/aggregates/items/", {"cursor": "zz"}),
        ("/api/projects/{p}/suggestions/", {"cursor": NUL}),
        ("/api/projects/{p}/jobs/", {"cursor": "zz"}),
        ("/api/projects/{p}/export/", {"format": NUL}),
        ("/api/projects/{p}/export/", {"format": "parquet"}),
        ("/api/projects/{p}/export/", {"min_annotators": "10" * 20}),
        ("/api/projects/{p}/export/", {"min_annotators": "-1"}),
        ("/api/projects/{p}/export/", {"max_hesitation": "1e308"}),
        ("/api/projects/{p}/export/", {"max_hesitation": "NaN"}),
        ("/api/projects/{p}/export/", {"min_margin": "inf"}),
        ("/api/projects/{p}/export/", {"provenance": NUL}),
        ("/api/projects/{p}/export/", {"pairs": LONG}),
        ("/api/projects/{p}/stats/", {"x\x00": "1"}),
    ):
        label = "-".join(f"{k.replace(chr(0), 'NUL')}" for k in params)
        value = next(iter(params.values()))
        tag = "nul" if "\x00" in value or any("\x00" in k for k in params) else value[:12]
        where = path.removeprefix("/api/projects/{p}/").strip("/").replace("/", "-")
        cases.append(Case(f"query-{where}-{label}-{tag}", "lead", "get", path, params))
    cases.append(Case("query-export-job-nul", "lead", "post", "/api/projects/{p}/export/?format=%00", None))
    return cases


ALL_API_CASES = _json_cases() + _query_cases()


def _fill(text: str, ids: dict[str, int]) -> str:
    return text.replace("{p}", str(ids["p"])).replace("{i}", str(ids["i"])).replace("{a}", str(ids["a"]))


def _fill_body(body: Any, ids: dict[str, int]) -> Any:
    if isinstance(body, dict):
        return {k: (ids["i"] if v == "{i}" else v) for k, v in body.items()}
    return body


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker) -> Iterator[dict[str, Any]]:
    """The project and its labels, built once for the module (every case is refused and checks it changed nothing;
    each case's own transaction is a savepoint inside this one, rolled back after it anyway)."""
    from annotation.queue.services import assignment_claim_next
    from tests.aggregation.conftest import annotate_ifs
    from tests.factories import UserFactory, demo_project_create

    with django_db_blocker.unblock(), transaction.atomic():
        lead, annotator, annotator2 = (UserFactory(username=name) for name in ("lead", "annotator", "annotator2"))
        project = demo_project_create(lead=lead, annotator=annotator, annotator2=annotator2)
        # The slider form saves only the item the queue handed out.
        item = assignment_claim_next(project=project, annotator=annotator).item
        item.refresh_from_db()
        other = project.items.exclude(pk=item.pk).order_by("id").first()
        annotation = annotate_ifs(other, annotator, [(600, 200), (100, 700)])
        built = _checksum()
        yield {"ids": {"p": project.pk, "i": item.pk, "a": annotation.pk}, "item": item, "users": (lead, annotator)}
        assert _checksum() == built, "a case's changes outlived it"
        transaction.set_rollback(True)


@pytest.fixture
def world(shared_world, db) -> dict[str, Any]:
    # Logged in per case: every test starts with an empty cache, where the sessions live.
    clients = {}
    for user in shared_world["users"]:
        client = Client()
        client.force_login(user)
        clients[user.username] = client
    return {**shared_world, "clients": clients}


def _send(client: Client, case: Case, ids: dict[str, int]) -> Any:
    path = _fill(case.path, ids)
    call: Callable[..., Any] = getattr(client, case.method)
    if case.method == "get":
        return call(path, case.body or {})
    if isinstance(case.body, bytes):
        return call(path, data=case.body, content_type=case.content_type)
    if case.body is None:
        return call(path)
    return call(path, data=json.dumps(_fill_body(case.body, ids)), content_type=case.content_type)


@pytest.mark.parametrize("case", ALL_API_CASES, ids=lambda c: c.id)
def test_hostile_api_input_is_refused_in_the_json_format(case, world):
    before = _checksum()

    response = _send(world["clients"][case.who], case, world["ids"])

    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"detail", "errors"}
    assert body["detail"]
    messages = json.dumps(body["errors"]) + body["detail"]
    assert "unexpected" not in messages.lower()
    assert _checksum() == before


# The time spent is clamped, never refused (client clocks are not trusted), so it is not in this catalogue.
FORM_CASES = [
    ("mu-nul", {"mu": NUL}),
    ("mu-10e30", {"mu": str(10**30)}),
    ("mu-1e308", {"mu": "1e308"}),
    ("mu-negative", {"mu": "-5"}),
    ("nu-over", {"nu": "900"}),
    ("mu-100k", {"mu": LONG}),
    ("nu-nul", {"nu": NUL}),
    ("nu-1e308", {"nu": "1e308"}),
    ("client-token-nul", {"client_token": NUL}),
    ("client-token-100k", {"client_token": LONG}),
    ("mu-missing", {"mu": None}),
    ("binary-field-in-ifs", {"mu": "", "binary_choice": str(10**30)}),
]


@pytest.mark.parametrize(("label", "change"), FORM_CASES, ids=[c[0] for c in FORM_CASES])
def test_hostile_slider_form_is_refused_with_its_fragment(label, change, world):
    from tests.annotation.conftest import ifs_form, item_url

    item = world["item"]
    data = ifs_form(item)
    first = next(key for key in data if key.startswith("mu-"))
    for key, value in change.items():
        target = first if key == "mu" else first.replace("mu-", "nu-") if key == "nu" else key
        if value is None:
            data.pop(target)
        else:
            data[target] = value
    client = world["clients"]["annotator"]
    before = _checksum()

    # A plain form POST: the page answers 422. (Through HTMX the same fragment comes with 200, because HTMX only
    # swaps successful answers in.)
    response = client.post(item_url(item.project, item), data)

    assert response.status_code == 422, response.status_code
    if any(isinstance(value, str) and "\x00" in value for value in change.values()):
        # Refused at the edge (config/input_limits.py), before the form is read: the answer names the field.
        field = first if "mu" in change else first.replace("mu-", "nu-") if "nu" in change else "client_token"
        assert response.content.decode().startswith(f"{field}: NUL characters"), response.content[:200]
    else:
        assert response["Content-Type"].startswith("text/html")
        assert "Nothing was saved" in response.content.decode()
    assert _checksum() == before


def _items_row(i: int, **change: Any) -> str:
    row: dict[str, Any] = {"id": f"hostile-{i}", "prompt": f"Prompt {i}", "responses": ["one", "two"]}
    row.update(change)
    return json.dumps(row)


def _label_row(item: str, **change: Any) -> str:
    values = [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.1, "nu": 0.7}]
    row: dict[str, Any] = {"item": item, "annotator": "importer", "mode": "ifs", "values": values}
    for key, value in change.items():
        if key.startswith("v0_"):
            values[0][key[3:]] = value
        else:
            row[key] = value
    return json.dumps(row)


ITEM_ROWS: list[tuple[str, bytes]] = [
    ("nul-byte", b'{"id": "x\x00", "prompt": "p", "responses": ["a", "b"]}'),
    ("nul-escaped-prompt", _items_row(1, prompt="a\x00b").encode()),
    ("nul-escaped-response", _items_row(1, responses=["a\x00", "b"]).encode()),
    ("nul-escaped-id", _items_row(1, id="x\x00y").encode()),
    ("nul-in-metadata", _items_row(1, metadata={"k\x00": 1}).encode()),
    ("suggestion-mu-1e308", _items_row(1, suggestion={"preferred": 0, "values": [[1e308, 0], [0, 0]]}).encode()),
    ("suggestion-mu-nan", _items_row(1, suggestion={"preferred": 0, "values": [["NaN", 0], [0, 0]]}).encode()),
    ("id-100k", _items_row(1, id=LONG).encode()),
    ("deep", ('{"id": "d", "prompt": "p", "responses": ["a", "b"], "metadata": ' + DEEP_OBJECT + "}").encode()),
    ("deep-row", DEEP.encode()),
    ("not-json", b"{id: 1"),
    ("bad-utf8", b'{"id": "\xff", "prompt": "p", "responses": ["a", "b"]}'),
    ("one-response", _items_row(1, responses=["only"]).encode()),
    ("responses-not-list", _items_row(1, responses="ab").encode()),
    ("prompt-number", _items_row(1, prompt=1e308).encode()),
    ("gold-10e30", _items_row(1, gold=10**30).encode()),
    ("scalar", b"1e308"),
    ("duplicate-id", _items_row(0).encode()),
]

LABEL_ROWS: list[tuple[str, str]] = [
    ("mu-1e308", _label_row("{item}", v0_mu=1e308)),
    ("mu--1e308", _label_row("{item}", v0_mu=-1e308)),
    ("nu-1e308", _label_row("{item}", v0_nu=1e308)),
    ("mu-text", _label_row("{item}", v0_mu="lots")),
    ("position-10e30", _label_row("{item}", v0_position=10**30)),
    ("annotator-nul", _label_row("{item}", annotator="a\x00b")),
    ("annotator-100k", _label_row("{item}", annotator=LONG)),
    ("item-nul", _label_row("x\x00y")),
    ("criterion-nul", _label_row("{item}", v0_criterion="a\x00")),
    ("deep", DEEP),
    ("not-json", "{item"),
    ("mode-nul", _label_row("{item}", mode="\x00")),
    ("time-10e30", _label_row("{item}", time_spent_ms=10**30)),
]


def _import(client: Client, path: str, text: bytes) -> Job:
    response = client.post(path, {"file": SimpleUploadedFile("rows.jsonl", text, content_type="application/jsonl")})
    assert response.status_code == 202, response.content[:300]
    return Job.objects.get(pk=response.json()["job"])


@pytest.mark.parametrize(("label", "row"), ITEM_ROWS, ids=[r[0] for r in ITEM_ROWS])
def test_a_hostile_item_row_fails_the_import_on_its_line(label, row, world, django_capture_on_commit_callbacks):
    text = _items_row(0).encode() + b"\n" + row + b"\n" + _items_row(2).encode() + b"\n"
    before = _checksum()

    with django_capture_on_commit_callbacks(execute=True):
        job = _import(world["clients"]["lead"], f"/api/projects/{world['ids']['p']}/items/import/", text)

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "unexpectedly" not in job.result["detail"]
    assert [e["line"] for e in job.errors] == [2], job.errors
    assert job.errors[0]["message"]
    assert _checksum() == before


@pytest.mark.parametrize(("label", "row"), LABEL_ROWS, ids=[r[0] for r in LABEL_ROWS])
def test_a_hostile_label_row_fails_the_import_on_its_line(label, row, world, django_capture_on_commit_callbacks):
    external_id = world["item"].external_id
    good = _label_row(external_id)
    text = (good + "\n" + row.replace("{item}", external_id) + "\n").encode()
    before = _checksum()

    with django_capture_on_commit_callbacks(execute=True):
        job = _import(world["clients"]["lead"], f"/api/projects/{world['ids']['p']}/labels/import/", text)

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "unexpectedly" not in job.result["detail"]
    assert [e["line"] for e in job.errors] == [2], job.errors
    assert job.errors[0]["message"]
    assert _checksum() == before


def test_the_catalogue_is_at_least_150_inputs():
    total = len(ALL_API_CASES) + len(FORM_CASES) + len(ITEM_ROWS) + len(LABEL_ROWS)
    assert total >= 150, total
    assert len({c.id for c in ALL_API_CASES}) == len(ALL_API_CASES)
