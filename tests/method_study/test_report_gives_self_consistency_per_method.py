"""The study report gives self-consistency per method from the unannounced repeats (each judged with the method
of its original), with its 95 % interval, and the paired within-annotator difference between methods; the figures
match a computation by hand from the saved labels and repeats, in the JSON, the page and the CSV. Without answered
repeats the report says why (rate 0, or none answered yet)."""

from __future__ import annotations

import csv
import io
import math
from statistics import mean, stdev

import pytest
from django.test import Client
from django.utils import timezone

from annotation import services
from annotation.models import Annotation, JudgmentValue, Repeat, StudyCell
from annotation.queue import services as claim_services
from annotation.repeats import services as repeat_services
from annotation.saving import SaveRequest
from projects.models import Project

METHODS = ["binary", "likert", "ifs"]
POINTS = 5  # the study fixture's Likert scale
# Two-sided 95 % Student t quantiles from the table, by degrees of freedom.
T_975 = {5: 2.570582, 10: 2.228139, 11: 2.200985}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _sk(first: tuple[float, float], second: tuple[float, float]) -> float:
    """Szmidt-Kacprzyk distance, written out with the hesitation π = 1 − μ − ν."""
    (m1, n1), (m2, n2) = first, second
    p1, p2 = 1 - m1 - n1, 1 - m2 - n2
    return math.sqrt(((m1 - m2) ** 2 + (n1 - n2) ** 2 + (p1 - p2) ** 2) / 2)


def _signed_as_ifs(s: float) -> tuple[float, float]:
    return max(s, 0.0), max(-s, 0.0)


def _likert_signed(value: int) -> float:
    return ((POINTS + 1) / 2 - value) / ((POINTS - 1) / 2)


def _judgment(method: str, k: int, sequence: int, again: bool) -> dict:
    """Person k's judgment of their planned cell ``sequence`` (and, ``again``, of its repeat): varied enough that
    the distances differ between people and methods."""
    twist = (k + sequence + (1 if again else 0) * (k % 3)) % 4
    if method == "binary":
        return {"binary_choice": twist % 2}
    if method == "likert":
        return {"likert_value": 1 + twist}
    mu0 = 200 + 150 * twist
    return {
        "values": [
            {"response": 0, "criterion": "overall", "mu": mu0, "nu": 100},
            {"response": 1, "criterion": "overall", "mu": 100, "nu": 800 - 100 * twist},
        ]
    }


def _distance(method: str, first: dict, second: dict) -> float:
    if method == "binary":
        s1, s2 = (1.0 if first["binary_choice"] == 0 else -1.0), (1.0 if second["binary_choice"] == 0 else -1.0)
        return _sk(_signed_as_ifs(s1), _signed_as_ifs(s2))
    if method == "likert":
        s1, s2 = _likert_signed(first["likert_value"]), _likert_signed(second["likert_value"])
        return _sk(_signed_as_ifs(s1), _signed_as_ifs(s2))
    pairs = zip(first["values"], second["values"], strict=True)
    return mean(_sk((a["mu"] / 1000, a["nu"] / 1000), (b["mu"] / 1000, b["nu"] / 1000)) for a, b in pairs)


@pytest.fixture
def repeated(study):
    """Every planned judgment saved; each person's first two cells of every method repeated and answered with
    the same method, except one binary repeat of person 0, which is skipped (no judgment: it counts for nothing).
    Returns the hand-computed distances per (person, method)."""
    project, lead, people = study
    plans = [list(StudyCell.objects.filter(annotator=p).select_related("item").order_by("sequence")) for p in people]
    for k, (person, cells) in enumerate(zip(people, plans, strict=True)):
        for cell in cells:
            claim_services.assignment_claim_next(project=project, annotator=person)
            first = _judgment(cell.method, k, cell.sequence, again=False)
            services.annotation_save(project=project, item=cell.item, annotator=person, save=SaveRequest(**first))
    # Repeats are chosen here rather than drawn by the queue, so that every method has some for every person.
    Project.objects.filter(pk=project.pk).update(repeat_rate=0.2)
    project.refresh_from_db()
    distances: dict[tuple[int, str], list[float]] = {}
    for k, (person, cells) in enumerate(zip(people, plans, strict=True)):
        for method in METHODS:
            for index, cell in enumerate([c for c in cells if c.method == method][:2]):
                original = Annotation.objects.get(item=cell.item, annotator=person)
                Repeat.objects.create(
                    project=project,
                    item=cell.item,
                    annotator=person,
                    annotation=original,
                    response_order=original.response_order,
                    items_between=3,
                    served_at=timezone.now(),
                )
                if k == 0 and method == "binary" and index == 1:
                    assert repeat_services.repeat_skip(project=project, item=cell.item, annotator=person, reason="x")
                    continue
                first = _judgment(method, k, cell.sequence, again=False)
                second = _judgment(method, k, cell.sequence, again=True)
                assert repeat_services.repeat_answer(
                    project=project, item=cell.item, annotator=person, save=SaveRequest(**second)
                )
                distances.setdefault((person.pk, method), []).append(_distance(method, first, second))
    # The originals are untouched by their repeats: the report reads them as saved.
    assert JudgmentValue.objects.filter(annotation__annotator=people[0]).count() == 3 * 2
    return project, lead, people, distances


def test_self_consistency_per_method_matches_a_hand_computation(repeated):
    project, lead, people, distances = repeated
    client = _client(lead)
    report = client.get(f"/api/projects/{project.pk}/method-study/report/").json()["report"]
    consistency = report["self_consistency"]
    assert consistency["empty"] is None
    assert consistency["repeats"] == 6 * 6 - 1
    by_method = {entry["method"]: entry for entry in consistency["methods"]}
    for method in METHODS:
        pooled = [d for (_, m), ds in distances.items() if m == method for d in ds]
        entry = by_method[method]
        assert entry["n"] == len(pooled) == (11 if method == "binary" else 12)
        assert entry["annotators"] == 6
        assert entry["value"] == pytest.approx(1 - mean(pooled))
        half = T_975[len(pooled) - 1] * stdev(pooled) / math.sqrt(len(pooled))
        assert entry["ci"] == pytest.approx([max(0.0, 1 - mean(pooled) - half), min(1.0, 1 - mean(pooled) + half)])
    # The distances differ between methods, so the check above can tell them apart.
    assert len({round(by_method[m]["value"], 6) for m in METHODS}) == 3

    paired = {(r["first"], r["second"]): r for r in consistency["paired"]}
    diffs = [mean(distances[(p.pk, "binary")]) - mean(distances[(p.pk, "ifs")]) for p in people]
    ifs_vs_binary = paired[("binary", "ifs")]
    assert ifs_vs_binary["n"] == 6
    assert ifs_vs_binary["value"] == pytest.approx(mean(diffs))
    half = T_975[5] * stdev(diffs) / math.sqrt(6)
    assert ifs_vs_binary["ci"] == pytest.approx([mean(diffs) - half, mean(diffs) + half])

    page = client.get(f"/projects/{project.pk}/method-study/report/").content.decode()
    assert 'id="consistency-per-method"' in page
    assert f"{by_method['likert']['value']:.3f}" in page
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(
                    client.get(f"/projects/{project.pk}/method-study/report/figures.csv").streaming_content
                ).decode()
            )
        )
    )
    csv_values = {r["method"]: float(r["value"]) for r in rows if r["section"] == "self_consistency" and r["method"]}
    assert csv_values == pytest.approx({m: by_method[m]["value"] for m in METHODS})
    csv_paired = [r for r in rows if r["section"] == "paired_difference" and r["figure"] == "self_consistency"]
    assert {(r["compared_with"], r["method"]) for r in csv_paired} == {(a, b) for a, b in paired}


@pytest.mark.parametrize(("rate", "says"), [(0.0, "The repeat rate is 0"), (0.3, "No repeats answered yet")])
def test_without_answered_repeats_the_report_says_why(study, rate, says):
    project, lead, people = study
    Project.objects.filter(pk=project.pk).update(repeat_rate=rate)
    cell = StudyCell.objects.filter(annotator=people[0]).select_related("item").order_by("sequence").first()
    claim_services.assignment_claim_next(project=project, annotator=people[0])
    services.annotation_save(
        project=project,
        item=cell.item,
        annotator=people[0],
        save=SaveRequest(**_judgment(cell.method, 0, 0, again=False)),
    )
    client = _client(lead)
    consistency = client.get(f"/api/projects/{project.pk}/method-study/report/").json()["report"]["self_consistency"]
    assert consistency["empty"].startswith(says)
    assert consistency["repeats"] == 0
    assert all(entry["value"] is None and entry["n"] == 0 for entry in consistency["methods"])
    page = client.get(f"/projects/{project.pk}/method-study/report/").content.decode()
    assert 'id="consistency-empty"' in page
    assert says in page
