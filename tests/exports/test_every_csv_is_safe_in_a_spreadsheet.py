"""Every CSV Penumbra serves is safe to open in a spreadsheet: no text cell starts with = + - @ tab or CR (config/
csv_safe.py puts a quote before it), while numbers, negative ones included, stay numbers.

The CSV endpoints are found, not listed: every GET route of the URL conf is asked as a lead, plain and with
``?format=csv`` / ``?as=csv``, and every answer in text/csv is scanned. The project's item ids, annotator names and
participant ids are formulas.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.crowd.services import study_link_create
from config.csv_safe import FORMULA_STARTS, csv_lines, spreadsheet_safe
from tests.annotation.study_helpers import enter
from tests.factories import ItemFactory, ProjectFactory, UserFactory
from tests.method_study.crossover import crossover_create, members_add

HOSTILE_IDS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tTAB", "\rCR"]
# Usernames may hold @ + - (Django's validator), participant ids - (the study link's rule).
HOSTILE_NAMES = ["@admin", "+441234", "-cmd", "=not-allowed-so-plain"]
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-0.5", "-0.5"),  # a plain number as text is no formula
        ("-1e-3", "-1e-3"),
        (-0.5, -0.5),
        (-3, -3),
        ("a=1", "a=1"),  # only the first character matters
        ("", ""),
        (None, None),
    ],
)
def test_the_rule_escapes_formula_text_and_keeps_numbers(cell, written):
    assert spreadsheet_safe(cell) == written


def test_the_writer_escapes_every_cell_and_the_reader_gets_the_text_back():
    text = "".join(csv_lines(["id", "value", "note"], [{"id": "=cmd|' /C calc'!A0", "value": -0.25, "note": None}]))

    rows = list(csv.reader(io.StringIO(text, newline="")))

    assert rows == [["id", "value", "note"], ["'=cmd|' /C calc'!A0", "-0.25", ""]]


def _get_routes(patterns, prefix=""):
    for entry in patterns:
        if not hasattr(entry.pattern, "_route"):
            continue
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _get_routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route


@pytest.fixture
def hostile_project(db):
    project = ProjectFactory(name="Formulas", likert_points=5)
    lead = UserFactory(username="csv-lead")
    people = [UserFactory(username=name) for name in HOSTILE_NAMES[:3]]
    people += [UserFactory(username=f"plain{i}") for i in range(3)]
    members_add(project, lead=lead, annotators=people)
    items = [ItemFactory(project=project, external_id=external_id) for external_id in HOSTILE_IDS]
    items += ItemFactory.create_batch(3, project=project)
    crossover_create(project, lead=lead, annotators=people, items=items, block_size=3)
    link = study_link_create(project=project, created_by=lead, name="=Wave")
    for pid in ("-cmd", "plain"):
        enter(Client(), link, pid)
    client = Client()
    client.force_login(lead)
    return {"project_id": project.pk, "link_id": link.pk}, client


def test_every_csv_endpoint_escapes_formulas(hostile_project):
    ids, client = hostile_project
    found: dict[str, str] = {}
    for route in _get_routes(get_resolver().url_patterns):
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        if route.startswith("admin/") or not set(names) <= set(ids):
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(ids[m.group(1)]), route)
        for query in ("", "?format=csv", "?as=csv"):
            response = client.get(path + query)
            if response.status_code == 200 and response["Content-Type"].startswith("text/csv"):
                body = response.streaming_content if response.streaming else [response.content]
                found[path + query] = b"".join(body).decode()

    # The design (page and API), the report's figures, the participants (page and API).
    assert len(found) >= 5, sorted(found)
    for where, text in found.items():
        for line, row in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
            for cell in row:
                assert not cell.startswith(FORMULA_STARTS) or PLAIN_NUMBER.fullmatch(cell), (where, line, cell)
    everything = "\n".join(found.values())
    # The hostile values are there, escaped: the scan above looked at them, it did not miss them.
    for escaped in ("'=HYPERLINK(", "'@SUM(A1:A9)", "'+1+1", "'-2+3", "'-cmd", "'@admin"):
        assert escaped in everything, escaped
    # Figure columns keep their numbers: a report figure or a time is a plain number, negative ones too.
    cells = [cell for text in found.values() for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    assert any(PLAIN_NUMBER.fullmatch(cell) for cell in cells)
