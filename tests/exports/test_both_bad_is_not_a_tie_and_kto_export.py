""" "Both bad" is its own binary judgment: saved from the page as a tie that says neither answer is good, refused where
it means nothing, read by every preference figure exactly as a tie, kept apart from ties (and from IFS labels that
oppose every response) on the dashboard, and turned into undesirable rows by the KTO export, which also labels
each IFS response by its aggregated score."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from aggregation.exports.stream import ExportOptions, export_lines
from aggregation.figures.judgments import judgment_kinds, signed_preferences
from aggregation.loading import judgments_load
from aggregation.models import ProjectAggregate
from aggregation.services import item_aggregates_recompute, project_aggregates_recompute
from annotation.models import Annotation
from annotation.queue.services import assignment_claim_item
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import TIE, Membership, Project
from tests.annotation.conftest import item_url
from tests.exports.builders import aggregate_item, label_ifs
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory


def _binary(annotators, *, items: int = 1, responses: int = 2) -> Project:
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0)
    for person in annotators:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    for _ in range(items):
        ItemFactory(project=project, is_blind=False, responses=[f"Answer {n}." for n in range(responses)])
    return project


def _save(project, item, person, **save) -> Annotation:
    assignment_claim_item(project=project, item=item, annotator=person)
    return annotation_save(project=project, item=item, annotator=person, save=SaveRequest(**save))


def test_the_page_saves_both_bad_as_a_tie_that_is_not_a_tie(annotator, annotator_client):
    project = _binary([annotator])
    item = project.items.get()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'name="binary_choice" value="both_bad" data-key="9"' in html

    annotator_client.post(item_url(project, item), {"binary_choice": "both_bad", "client_token": "bb1"})

    annotation = Annotation.objects.get(item=item)
    assert (annotation.binary_choice, annotation.both_bad) == (TIE, True)
    assert annotation.revisions.get().payload["both_bad"] is True
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'value="both_bad" data-key="9" checked' in html
    assert 'value="-1" data-key="0"\n          checked' not in html


@pytest.mark.parametrize(
    ("mode", "responses", "save", "message"),
    [
        (Project.Mode.BINARY, 2, {"both_bad": True, "binary_choice": 0}, "Both bad prefers neither response"),
        (Project.Mode.BINARY, 3, {"both_bad": True}, "two responses can say both are bad"),
        (Project.Mode.LIKERT, 2, {"both_bad": True, "likert_value": 4}, "two responses can say both are bad"),
        (Project.Mode.BINARY, 2, {"both_bad": "yes"}, "Expected true or false"),
    ],
)
def test_both_bad_is_refused_where_it_means_nothing(annotator, mode, responses, save, message):
    project = _binary([annotator], responses=responses)
    Project.objects.filter(pk=project.pk).update(mode=mode)
    project.refresh_from_db()
    with pytest.raises(ValidationError, match=message):
        _save(project, project.items.get(), annotator, **save)
    assert not Annotation.objects.exists()


def test_the_database_keeps_both_bad_a_binary_tie(annotator):
    project = _binary([annotator])
    _save(project, project.items.get(), annotator, both_bad=True)
    stored = Annotation.objects.all()
    for bad in ({"binary_choice": 0}, {"mode": Project.Mode.IFS}):
        with pytest.raises(IntegrityError), transaction.atomic():
            stored.update(**bad)
    assert stored.get().both_bad


def test_every_preference_figure_reads_both_bad_as_a_tie_and_the_kinds_keep_them_apart(annotator, annotator2):
    project = _binary([annotator, annotator2], items=2)
    tie_item, bad_item = project.items.order_by("id")
    _save(project, tie_item, annotator, binary_choice=TIE)
    _save(project, tie_item, annotator2, binary_choice=TIE)
    _save(project, bad_item, annotator, both_bad=True)
    _save(project, bad_item, annotator2, both_bad=True)

    data = judgments_load(project=project)
    s = signed_preferences(data)
    np.testing.assert_array_equal(s[0], s[1])  # the same figures for a tie and for both bad
    assert judgment_kinds(data) == {
        "binary_ties": 2,
        "binary_both_bad": 2,
        "ifs_all_opposed": 0,
        "ifs_all_supported": 0,
    }


def test_the_dashboard_shows_ties_and_both_bad_apart(lead, annotator, client):
    project = _binary([annotator], items=2)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    first, second = project.items.order_by("id")
    _save(project, first, annotator, binary_choice=TIE)
    _save(project, second, annotator, both_bad=True)
    project_aggregates_recompute(project_id=project.pk)
    assert ProjectAggregate.objects.get(project=project).progress["judgment_kinds"]["binary_both_bad"] == 1

    client.force_login(lead)
    html = client.get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    assert 'id="judgment-kinds"' in html
    assert '1 ties and 1 "both bad" by choice' in " ".join(html.split()).replace("&quot;", '"')


def test_kto_rows_from_ifs_scores_and_from_both_bad(project, annotator, annotator2):
    ifs_items = list(project.items.order_by("id")[:3])
    project.items.exclude(pk__in=[i.pk for i in ifs_items]).delete()
    # Scores S = μ − ν per response: one good and one bad, two bad (a tie DPO cannot export), one within the band.
    for item, scores in zip(
        ifs_items,
        [[(0.8, 0.1), (0.1, 0.7)], [(0.1, 0.6), (0.2, 0.7)], [(0.41, 0.4), (0.9, 0.0)]],
        strict=True,
    ):
        for person in (annotator, annotator2):
            label_ifs(item=item, annotator=person, values=[(int(m * 1000), int(n * 1000)) for m, n in scores])
        aggregate_item(item=item, scores=scores)

    rows = [json.loads(line) for line in export_lines(project=project, options=ExportOptions(format="kto"))]

    by_id = {row["id"]: row for row in rows}
    first, both_low, banded = (item.external_id for item in ifs_items)
    assert (by_id[f"{first}#0"]["label"], by_id[f"{first}#1"]["label"]) == (True, False)
    assert (by_id[f"{both_low}#0"]["label"], by_id[f"{both_low}#1"]["label"]) == (False, False)
    assert f"{banded}#0" not in by_id  # S = 0.01 is inside the tie band: no claim either way
    assert by_id[f"{banded}#1"]["label"] is True
    assert set(rows[0]) >= {"prompt", "completion", "label"}
    assert by_id[f"{first}#0"]["completion"] == ifs_items[0].responses.get(position=0).text


def test_kto_rows_from_binary_labels(annotator, annotator2):
    third = UserFactory(username="annotator3")
    project = _binary([annotator, annotator2, third], items=2)
    bad, chosen = project.items.order_by("id")
    _save(project, bad, annotator, both_bad=True)
    _save(project, bad, annotator2, both_bad=True)
    _save(project, bad, third, binary_choice=0)
    for person in (annotator, annotator2, third):
        _save(project, chosen, person, binary_choice=1)
    item_aggregates_recompute(project_id=project.pk)

    rows = [json.loads(line) for line in export_lines(project=project, options=ExportOptions(format="kto"))]

    labels = {row["id"]: (row["label"], row["source"]) for row in rows}
    assert labels == {
        f"{bad.external_id}#0": (False, "both_bad"),
        f"{bad.external_id}#1": (False, "both_bad"),
        f"{chosen.external_id}#1": (True, "choice"),
    }
