"""The lead's report on a crossover study: empty before any label, then per-method figures with intervals that match
a computation by hand from the saved labels, every figure in the CSV, the plots as SVG; nobody else reads it."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from statistics import mean

import pytest
from django.test import Client

from aggregation.designs.report import PLOTS
from annotation import services
from annotation.models import StudyCell
from annotation.queue import services as claim_services
from annotation.saving import SaveRequest
from projects.models import TIE

METHODS = ["binary", "likert", "ifs"]


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _label_all(project, people) -> dict[tuple[int, str], list[bool]]:
    """Every planned judgment saved: person k agrees with gold unless (k + sequence) % 4 == 0, and takes k + 1
    seconds longer with IFS. Returns, per (person, method), whether each label agreed with gold."""
    correct: dict[tuple[int, str], list[bool]] = defaultdict(list)
    for k, person in enumerate(people):
        for cell in StudyCell.objects.filter(annotator=person).select_related("item").order_by("sequence"):
            assignment = claim_services.assignment_claim_next(project=project, annotator=person)
            assert assignment is not None
            assert assignment.item_id == cell.item_id
            right = (k + cell.sequence) % 4 != 0
            gold = cell.item.gold_position
            preferred = gold if right else 1 - gold
            arguments: dict = {"time_spent_ms": 1000 * (3 + (k + 1 if cell.method == "ifs" else 0))}
            if cell.method == "binary":
                arguments["binary_choice"] = preferred
            elif cell.method == "likert":
                arguments["likert_value"] = 1 if preferred == 0 else 5
            else:
                good, bad = {"mu": 800, "nu": 100}, {"mu": 100, "nu": 800}
                arguments["values"] = [
                    {"response": position, "criterion": "overall", **(good if position == preferred else bad)}
                    for position in (0, 1)
                ]
            services.annotation_save(project=project, item=cell.item, annotator=person, save=SaveRequest(**arguments))
            correct[(person.pk, cell.method)].append(right)
    assert TIE not in {c.item.gold_position for c in StudyCell.objects.select_related("item")}
    return correct


def test_without_labels_the_report_says_so(study):
    project, lead, _people = study
    client = _client(lead)
    page = client.get(f"/projects/{project.pk}/method-study/report/")
    assert page.status_code == 200
    assert b"report-empty" in page.content
    data = client.get(f"/api/projects/{project.pk}/method-study/report/").json()["report"]
    assert data["saved"] == 0
    assert data["planned"] == 54
    assert [m["labels"] for m in data["figures"]["methods"]] == [0, 0, 0]
    assert all(m["gold_agreement"]["value"] is None for m in data["figures"]["methods"])
    rows = list(
        csv.DictReader(
            io.StringIO(b"".join(client.get(page.wsgi_request.path + "figures.csv").streaming_content).decode())
        )
    )
    assert rows
    # Every figure is empty; the one setting in the CSV, the repeat rate, is the project's 0.
    assert all(r["value"] in ("", "0") for r in rows if r["figure"] != "repeat_rate")
    assert [float(r["value"]) for r in rows if r["figure"] == "repeat_rate"] == [0.0]


def test_the_report_matches_the_labels_and_exports_them(study, django_assert_max_num_queries):
    project, lead, people = study
    correct = _label_all(project, people)
    client = _client(lead)
    with django_assert_max_num_queries(12):
        data = client.get(f"/api/projects/{project.pk}/method-study/report/").json()["report"]
    figures = data["figures"]
    assert data["saved"] == 54
    by_method = {m["method"]: m for m in figures["methods"]}
    for method in METHODS:
        entry = by_method[method]
        assert entry["labels"] == 18
        per_person = [mean(correct[(p.pk, method)]) for p in people]
        assert entry["gold_agreement"]["value"] == pytest.approx(mean(per_person))
        low, high = entry["gold_agreement"]["ci"]
        assert low <= entry["gold_agreement"]["value"] <= high
        assert set(entry["agreement"]) == {
            "alpha_interval",
            "alpha_nominal",
            "pairwise_with_ties",
            "pairwise_without_ties",
        }
    paired = {(r["first"], r["second"], r["figure"]): r for r in figures["paired"]}
    diffs = [mean(correct[(p.pk, "ifs")]) - mean(correct[(p.pk, "binary")]) for p in people]
    assert paired[("binary", "ifs", "gold_agreement")]["value"] == pytest.approx(mean(diffs))
    # Person k takes k + 1 more seconds per IFS item: the paired difference is their mean, 3.5 s, whatever else.
    seconds = paired[("binary", "ifs", "seconds_per_item")]
    assert seconds["value"] == pytest.approx(3.5)
    assert seconds["n"] == 6
    assert seconds["ci"][0] < 3.5 < seconds["ci"][1]

    page = client.get(f"/projects/{project.pk}/method-study/report/")
    assert b"per-method" in page.content
    assert page.content.count(b"<svg") == len(PLOTS)
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(
                    client.get(f"/projects/{project.pk}/method-study/report/figures.csv").streaming_content
                ).decode()
            )
        )
    )
    gold_rows = [r for r in rows if r["section"] == "per_annotator_mean" and r["figure"] == "gold_agreement"]
    assert {r["method"]: float(r["value"]) for r in gold_rows} == pytest.approx(
        {m: by_method[m]["gold_agreement"]["value"] for m in METHODS}
    )
    assert {r["section"] for r in rows} >= {"agreement", "paired_difference", "fatigue_session", "annotator"}
    plot = client.get(f"/projects/{project.pk}/method-study/report/paired.svg")
    assert plot["Content-Type"] == "image/svg+xml"
    assert plot.content.startswith(b"<svg")


def test_only_the_lead_reads_the_report(study):
    project, _lead, people = study
    client = _client(people[0])
    for path in ("method-study/report/", "method-study/report/figures.csv", "method-study/report/time.svg"):
        assert client.get(f"/projects/{project.pk}/{path}").status_code == 404
    assert client.get(f"/api/projects/{project.pk}/method-study/report/").status_code == 404
    assert client.get(f"/projects/{project.pk}/method-study/").status_code == 404
