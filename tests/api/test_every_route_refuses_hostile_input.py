"""The hostile-input catalogue, generated: every route of the URL conf, every request body of the OpenAPI schema (which
drf-spectacular builds from the same URL conf) and every form a page renders, probed with control characters in
text and numbers too long to parse. A new route, serializer field or form field is covered without editing this file.

Rules checked (config/input_limits.py): a control character anywhere (URL path segment, query parameter, JSON key or
string, form field) is a 422 naming the field; a 5,000-digit number is a 4xx (or, on a page, the form shown again),
never a 500; and nothing reaches the database (a digest of every table before and after each probe).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client, override_settings
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter

from annotation.models import Annotation, ItemNote
from tests.snapshots import changes, database_digest

CONTROL = {"nul": "a\x00b", "escape": "a\x1bb", "bell": "\x07"}
ONE_LINE = {"newline": "a\nb", "tab": "a\tb"}  # refused where text is one line: paths and query parameters
HUGE = "9" * 5000
SKIPPED_PREFIXES = ("admin/",)  # Django's admin: its own regex routes, staff only


@dataclass(frozen=True)
class Route:
    route: str  # "projects/<int:project_id>/items/<int:item_id>/"
    name: str
    converters: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def fill(self, ids: dict[str, Any], **override: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(2)
            if name in override:
                return override[name]
            default = 1 if isinstance(self.converters.get(name), IntConverter) else "x"
            return str(ids.get(name, default))

        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", one, self.route)


def _walk(patterns: list[Any], prefix: str = "", converters: dict[str, Any] | None = None) -> Iterator[Route]:
    for entry in patterns:
        pattern = entry.pattern
        if not hasattr(pattern, "_route"):
            continue  # a regex route (the admin's): not ours
        route = prefix + str(pattern)
        found = {**(converters or {}), **pattern.converters}
        if route.startswith(SKIPPED_PREFIXES):
            continue
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, route, found)
        elif isinstance(entry, URLPattern):
            yield Route(route, entry.name or route, found)


ROUTES = sorted(set(_walk(get_resolver().url_patterns)), key=lambda r: r.route)
PARAMETRISED = [r for r in ROUTES if r.converters]


@dataclass
class World:
    ids: dict[str, Any]
    users: dict[str, str]


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
    from tests.api.test_permission_matrix import _build_world

    media = override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("hostile-media"))
    with django_db_blocker.unblock(), media, transaction.atomic():
        built = _build_world()
        from annotation.crowd.models import StudyLink
        from projects.models import Item

        item = Item.objects.get(pk=built["unlabelled"])
        # The lead may create projects (projects.selectors.project_create_allowed), so that the create route is
        # probed past its permission check.
        lead_user = get_user_model().objects.get(username="lead")
        may_create = Permission.objects.get(codename="add_project", content_type__app_label="projects")
        lead_user.user_permissions.add(may_create)
        flag = ItemNote.objects.create(project_id=built["project"], item=item, kind="flag", text="Look at this")
        from aggregation.designs.report import PLOTS

        ids = {
            "project_id": built["project"],
            "item_id": built["unlabelled"],
            "job_id": built["job"],
            "annotation_id": built["own"],
            "link_id": built["link"],
            "note_id": flag.pk,
            "identity_id": built["identity"],
            "user_id": Annotation.objects.get(pk=built["own"]).annotator_id,
            "token": StudyLink.objects.get(pk=built["link"]).token,
            "plot": next(iter(PLOTS)),
        }
        yield World(ids=ids, users={"lead": "lead", "annotator": "annotator"})
        transaction.set_rollback(True)


@pytest.fixture
def clients(shared_world, db, django_user_model) -> dict[str, Client]:
    made = {}
    for persona, username in shared_world.users.items():
        client = Client()
        client.force_login(django_user_model.objects.get(username=username))
        made[persona] = client
    return made


class Probes:
    """One route's probes: each answer checked as it comes, failures gathered (so one run lists them all), and the
    database compared once around them all (a refused probe writes nothing, so none can undo another's write)."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.sent = 0
        self.before = database_digest()

    def check(self, label: str, ok: bool, response: Any, *, digest: bool = False) -> None:
        """``digest``: compare the database after this probe alone (a probe that may reach a view's write)."""
        self.sent += 1
        if not ok:
            self.failures.append(f"{label}: {response.status_code} {response.content[:160]!r}")
        if digest and (changed := changes(self.before, database_digest())):
            self.failures.append(f"{label}: changed {changed}")
            self.before = database_digest()

    def done(self, record_property: Any = None) -> None:
        if record_property is not None:
            record_property("probes", self.sent)  # the catalogue's size: sum them from --junitxml
        assert not self.failures, "\n".join(self.failures)
        assert not changes(self.before, database_digest())


def _refused_naming(response: Any, field_name: str) -> bool:
    if response.status_code != 422:
        return False
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        return set(body) == {"detail", "errors"} and any(
            key == field_name or key.startswith(f"{field_name}.") for key in body["errors"]
        )
    return response.content.decode().startswith(f"{field_name}: ")


def _client_error(response: Any) -> bool:
    return 400 <= response.status_code < 500


# Paths: every converter of every route, by GET and POST.


def _path_values(converter: Any) -> dict[str, str]:
    if isinstance(converter, IntConverter):
        return {"5000-digits": HUGE, "10e30": str(10**30)}
    return {**CONTROL, **ONE_LINE}


@pytest.mark.parametrize("route", PARAMETRISED, ids=[r.name for r in PARAMETRISED])
def test_a_hostile_path_segment_is_refused(route, shared_world, clients, record_property):
    from urllib.parse import quote

    probes = Probes()
    for name, converter in route.converters.items():
        for label, value in _path_values(converter).items():
            path = route.fill(shared_world.ids, **{name: quote(value, safe="")})
            for method in ("get", "post"):
                response = getattr(clients["lead"], method)(path)
                # A number too big for any id is no route (404) or the view's own "no such" answer; never a 500.
                ok = response.status_code < 500 if value.isdigit() else _refused_naming(response, "path")
                probes.check(f"{method} {name}={label}", ok, response)
    probes.done(record_property)


# Query strings: every route, with the API's documented query parameters and one any view might read.


def _schema() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return _schema()


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_a_hostile_query_parameter_is_refused(route, shared_world, clients, schema, record_property):
    names = {"q"}
    template = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route.route)
    for operation in schema["paths"].get(template, {}).values():
        names |= {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
    probes = Probes()
    path = route.fill(shared_world.ids)
    for name in sorted(names):
        for label, value in {**CONTROL, **ONE_LINE, "5000-digits": HUGE}.items():
            response = clients["lead"].get(path + "?" + urlencode({name: value}))
            ok = response.status_code < 500 if value == HUGE else _refused_naming(response, name)
            probes.check(f"{name}={label}", ok, response)
    response = clients["lead"].get(path + "?" + urlencode({"x\x00": "1"}))
    probes.check("NUL in a name", _refused_naming(response, "x?"), response)
    probes.done(record_property)


# API bodies: every property of every request body of the schema.


def _properties(schema: dict[str, Any], components: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    if schema.get("type") == "array":
        return "array", _properties(schema.get("items", {}), components)[1]
    return "object", schema.get("properties", {})


def _operations() -> list[tuple[str, str, str, str]]:
    schema = _schema()
    return [
        (f"{operation['operationId']}-{media.split('/')[-1]}", template, method, media)
        for template, operations in schema["paths"].items()
        for method, operation in operations.items()
        for media in operation.get("requestBody", {}).get("content", {})
    ]


OPERATIONS = _operations()
ANNOTATOR_PATHS = re.compile(r"/annotations/")  # the annotator's own endpoints: a lead is refused there anyway


def _raw_json(shape: str, prop: str, value: str) -> bytes:
    # The 5,000-digit number goes in as a JSON number, not a string: that is what Python's int parser chokes on.
    literal = value if value == HUGE else json.dumps(value)
    body = "{" + json.dumps(prop) + ": " + literal + "}"
    return ("[" + body + "]" if shape == "array" else body).encode()


@pytest.mark.parametrize(("label", "template", "method", "media"), OPERATIONS, ids=[o[0] for o in OPERATIONS])
def test_a_hostile_request_body_is_refused(
    label, template, method, media, shared_world, clients, schema, record_property
):
    operation = schema["paths"][template][method]
    shape, properties = _properties(
        operation["requestBody"]["content"][media]["schema"], schema["components"]["schemas"]
    )
    path = template.format(**shared_world.ids)
    client = clients["annotator" if ANNOTATOR_PATHS.search(path) else "lead"]
    probes = Probes()
    for prop, spec in properties.items():
        hostile = dict(CONTROL)
        if media == "application/json" and spec.get("type", "string") in ("integer", "number", "string"):
            hostile["5000-digits"] = HUGE
        for name, value in hostile.items():
            if media == "application/json":
                response = getattr(client, method)(path, _raw_json(shape, prop, value), content_type=media)
            elif media == "multipart/form-data":
                upload = SimpleUploadedFile("rows.jsonl", b'{"id": "u1", "prompt": "p", "responses": ["a", "b"]}\n')
                target = prop if prop != "file" else "format"  # the file's contents are the import rows' business
                if method == "post":
                    response = client.post(path, {"file": upload, target: value})
                else:  # the test client encodes multipart bodies for POST alone
                    body = encode_multipart(BOUNDARY, {"file": upload, target: value})
                    response = getattr(client, method)(path, body, content_type=MULTIPART_CONTENT)
            else:
                response = getattr(client, method)(path, urlencode({prop: value}), content_type=media)
            if value == HUGE:
                ok = _client_error(response) and response["Content-Type"].startswith("application/json")
            else:
                named = prop if media == "application/json" or prop != "file" else "format"
                array = shape == "array" and media == "application/json"
                ok = _refused_naming(response, f"0.{named}" if array else named)
            probes.check(f"{prop}={name}", ok, response)
    probes.done(record_property)


# Pages: every form every page renders, to the lead and to the annotator, each field in turn.


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._open = a.get("method", "get").lower() == "post" or "hx-post" in a
            if self._open:
                self.forms.append({"action": a.get("hx-post") or a.get("action", ""), "fields": {}, "numbers": set()})
            return
        if not self._open or "name" not in a:
            return
        fields = self.forms[-1]["fields"]
        if tag == "input" and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a and a["name"] in fields:
                return
            fields[a["name"]] = a.get("value", "")
            if a.get("type") in ("number", "range") or re.fullmatch(r"-?\d+(\.\d+)?", a.get("value", "")):
                self.forms[-1]["numbers"].add(a["name"])
        elif tag in ("textarea", "select"):
            fields.setdefault(a["name"], "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = False


# Fields that take any number by design, so a huge one is saved like a small one (its answer is still checked).
TOLERANT = {
    # Advisory: clamped to the time the item was held, anything unparsable counts 0; client clocks are not trusted.
    "time_spent_ms",
    "time_on_item_ms",
}

PAGES = [r for r in ROUTES if not r.route.startswith("api/") and not r.route.endswith((".csv", ".svg"))]


# Pages with forms a persona is shown (the lead: settings, export, study links, method study, item review, …; an
# annotator: the item page's save, skip and flag): at least these many, so the walk cannot pass by finding none.
FORM_PAGES_AT_LEAST = {"lead": 8, "annotator": 2}


@pytest.mark.parametrize("persona", ["lead", "annotator"])
def test_every_form_on_every_page_refuses_hostile_fields(persona, shared_world, clients, record_property):
    """Every page the persona is shown, every form on it, every field: control characters refused naming the field,
    a 5,000-digit number never a server error. Pages without a form (or not shown to this persona) are walked past."""
    client = clients[persona]
    probes = Probes()
    pages_with_forms = []
    for route in PAGES:
        page = route.fill(shared_world.ids)
        response = client.get(page, follow=True)
        if response.status_code != 200 or not response["Content-Type"].startswith("text/html"):
            continue
        probes.before = database_digest()  # what the GET itself recorded (an exposure) is not the probes' doing
        parser = _Forms()
        parser.feed(response.content.decode())
        sent = probes.sent
        for form in parser.forms:
            action = urlsplit(form["action"]).path or response.request["PATH_INFO"]
            if action.startswith("/accounts/logout"):
                continue  # its only field is the CSRF token, and a valid post would log the client out
            base = {k: v for k, v in form["fields"].items() if k != "csrfmiddlewaretoken"}
            for name in base:
                hostile = dict(CONTROL)
                if name in form["numbers"]:
                    hostile["5000-digits"] = HUGE
                for label, value in hostile.items():
                    answer = client.post(action, {**base, name: value})
                    ok = answer.status_code < 500 if value == HUGE else _refused_naming(answer, name)
                    probes.check(f"{action} {name}={label}", ok, answer, digest=value == HUGE and name not in TOLERANT)
                    if name in TOLERANT:
                        probes.before = database_digest()  # its save was checked by its answer alone
        if probes.sent > sent:
            pages_with_forms.append(route.name)
        assert not changes(probes.before, database_digest()), page
    assert len(pages_with_forms) >= FORM_PAGES_AT_LEAST[persona], pages_with_forms
    probes.done(record_property)


def test_the_catalogue_reaches_every_route():
    """The generation found what exists: every route, some with converters, schema bodies and pages with forms."""
    assert len(ROUTES) >= 50, len(ROUTES)
    assert {r.name for r in ROUTES} >= {"api-annotations", "item_flag", "study_enter", "project_settings"}
    assert len(OPERATIONS) >= 15, OPERATIONS
