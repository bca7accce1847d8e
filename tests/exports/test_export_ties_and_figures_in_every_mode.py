"""Binary and Likert items export soft labels and their agreement; ties are marked or left out, in every mode.

Labels go through the aggregation engine (item_aggregates_recompute), so these tests check what the item figures
store as well as what the export makes of it.
"""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from aggregation import services
from aggregation.exports.stream import ExportOptions, export_lines
from aggregation.models import AnnotatorAggregate, ItemAggregate
from projects.models import Membership, Project
from tests.aggregation.conftest import annotate_binary, annotate_ifs, annotate_likert, project_make
from tests.factories import ItemFactory, MembershipFactory

pytestmark = pytest.mark.django_db


def rows(project, **options):
    return [json.loads(line) for line in export_lines(project=project, options=ExportOptions(**options))]


def by_id(exported):
    return {row["id"].split("#")[0]: row for row in exported}


def weigh(project, annotators, weights):
    for annotator, weight in zip(annotators, weights, strict=True):
        AnnotatorAggregate.objects.create(
            project=project, annotator=annotator, weight=weight, computed_at=timezone.now()
        )


@pytest.fixture
def binary_project():
    """Item 0: choices 0, 0, 1 (a majority). Item 1: choices 0 and 1 by annotators whose weights differ (a tied
    vote that the weights alone turn into a preference)."""
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=2)
    weigh(project, annotators, [0.5, 0.3, 0.2])
    for annotator, choice in zip(annotators, [0, 0, 1], strict=True):
        annotate_binary(items[0], annotator, choice)
    annotate_binary(items[1], annotators[0], 0)
    annotate_binary(items[1], annotators[2], 1)
    services.item_aggregates_recompute(project_id=project.pk)
    return project, items


def test_binary_soft_labels_come_from_the_signed_preference(binary_project):
    project, items = binary_project
    aggregate = ItemAggregate.objects.get(item=items[0])
    mean_s = (0.5 + 0.3 - 0.2) / 1.0

    soft = by_id(rows(project, format="soft"))[items[0].external_id]

    assert aggregate.signed_preference == pytest.approx(mean_s)
    assert (soft["position_a"], soft["position_b"]) == (0, 1)
    assert soft["p_a_over_b"] == pytest.approx(0.5 + mean_s / 2, abs=1e-6)
    assert soft["consensus_margin"] == pytest.approx(2 * mean_s, abs=1e-6)
    assert soft["hesitation"] is None
    assert soft["agreement"] == pytest.approx(1 / 3, abs=1e-6)
    assert soft["tie"] is False


def test_binary_dpo_rows_carry_agreement_and_null_hesitation(binary_project):
    project, items = binary_project

    (row,) = rows(project, format="dpo")

    assert row["id"] == items[0].external_id
    assert row["chosen_position"] == 0
    assert row["agreement"] == pytest.approx(1 / 3, abs=1e-6)
    assert row["hesitation"] is None
    assert row["tie"] is False


def test_a_tied_binary_vote_is_marked_though_the_weights_lean_one_way(binary_project):
    project, items = binary_project
    tied = ItemAggregate.objects.get(item=items[1])
    # Weights 0.5 against 0.2: s̄ = 0.3/0.7, a margin well past the tie tolerance.
    assert tied.margin == pytest.approx(2 * 0.3 / 0.7)
    assert tied.best_position == 0
    assert tied.vote_tie is True

    assert items[1].external_id not in by_id(rows(project, format="dpo"))
    marked = by_id(rows(project, format="dpo", ties="mark"))[items[1].external_id]
    assert marked["tie"] is True
    assert marked["agreement"] == pytest.approx(0.0)
    soft = by_id(rows(project, format="soft"))
    assert soft[items[1].external_id]["tie"] is True
    assert items[1].external_id not in by_id(rows(project, format="soft", ties="exclude"))
    assert by_id(rows(project, format="ifs"))[items[1].external_id]["tie"] is True
    assert items[1].external_id not in by_id(rows(project, format="ifs", ties="exclude"))


def test_binary_items_with_three_responses_export_best_against_worst():
    project, _, annotators = project_make(mode=Project.Mode.BINARY, n_items=0)
    item = ItemFactory(project=project, responses=["first", "second", "third"])
    for annotator, choice in zip(annotators, [1, 1, 0], strict=True):
        annotate_binary(item, annotator, choice)
    services.item_aggregates_recompute(project_id=project.pk)

    (dpo,) = rows(project, format="dpo")
    (soft,) = rows(project, format="soft")

    # Shares 1/3, 2/3, 0 → pseudo-scores −1/3, 1/3, −1: best "second", worst "third", margin 4/3.
    assert (dpo["chosen"], dpo["rejected"]) == ("second", "third")
    assert dpo["consensus_margin"] == pytest.approx(4 / 3, abs=1e-6)
    assert (soft["position_a"], soft["position_b"]) == (1, 2)
    assert soft["p_a_over_b"] == pytest.approx(0.5 + (4 / 3) / 4, abs=1e-6)
    assert soft["tie"] is False


@pytest.fixture
def likert_project():
    """7-point scale (1 = position 0 strongly preferred, centre 4). Item 0: 1, 2, 6. Item 1: 2 and 6, tied votes."""
    project, items, annotators = project_make(mode=Project.Mode.LIKERT, n_items=2, likert_points=7)
    for annotator, value in zip(annotators, [1, 2, 6], strict=True):
        annotate_likert(items[0], annotator, value)
    annotate_likert(items[1], annotators[0], 1)
    annotate_likert(items[1], annotators[1], 6)
    services.item_aggregates_recompute(project_id=project.pk)
    return project, items


def test_likert_soft_labels_agreement_and_ties(likert_project):
    project, items = likert_project
    mean_s = ((4 - 1) / 3 + (4 - 2) / 3 + (4 - 6) / 3) / 3

    soft = by_id(rows(project, format="soft"))
    dpo = by_id(rows(project, format="dpo"))

    assert soft[items[0].external_id]["p_a_over_b"] == pytest.approx(0.5 + mean_s / 2, abs=1e-6)
    # Signs +, +, −: one agreeing pair of three.
    assert soft[items[0].external_id]["agreement"] == pytest.approx(1 / 3, abs=1e-6)
    assert dpo[items[0].external_id]["agreement"] == pytest.approx(1 / 3, abs=1e-6)
    assert dpo[items[0].external_id]["hesitation"] is None
    # Values 1 and 6: s = 1 and −2/3, so s̄ leans to position 0, but one annotator prefers each side.
    assert ItemAggregate.objects.get(item=items[1]).best_position == 0
    assert soft[items[1].external_id]["tie"] is True
    assert items[1].external_id not in dpo
    assert by_id(rows(project, format="dpo", ties="mark"))[items[1].external_id]["tie"] is True


def test_ifs_ties_within_tolerance_are_marked_on_request(project, annotator, annotator2):
    items = list(project.items.order_by("id")[:2])
    annotate_ifs(items[0], annotator, [(800, 100), (100, 700)])
    annotate_ifs(items[0], annotator2, [(700, 100), (200, 600)])
    annotate_ifs(items[1], annotator, [(500, 300), (520, 300)])  # ΔS = 0.02 < tie tolerance 0.1
    annotate_ifs(items[1], annotator2, [(500, 300), (520, 300)])
    services.item_aggregates_recompute(project_id=project.pk)

    default = by_id(rows(project, format="dpo"))
    marked = by_id(rows(project, format="dpo", ties="mark"))

    assert set(default) == {items[0].external_id}
    assert default[items[0].external_id]["tie"] is False
    assert default[items[0].external_id]["hesitation"] is not None
    assert marked[items[1].external_id]["tie"] is True
    assert marked[items[1].external_id]["p_chosen"] == pytest.approx(0.505, abs=1e-6)
    assert by_id(rows(project, format="soft"))[items[1].external_id]["tie"] is True


def test_min_margin_filters_margins_and_ties_decides_ties(binary_project):
    project, items = binary_project
    ids = {item.external_id: index for index, item in enumerate(items)}

    def kept(**options):
        return sorted(ids[r["id"]] for r in rows(project, format="dpo", **options))

    # Margins: item 0 1.2, item 1 (the tie) 0.857.
    assert kept(min_margin=0.5) == [0]
    assert kept(min_margin=0.5, ties="mark") == [0, 1]
    assert kept(min_margin=1.0, ties="mark") == [0]


def test_api_and_command_take_the_ties_option(binary_project, lead, tmp_path):
    project, items = binary_project
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    client = APIClient()
    client.force_authenticate(lead)

    response = client.get(f"/api/projects/{project.pk}/export/?format=dpo&ties=mark")
    streamed = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    bad = client.get(f"/api/projects/{project.pk}/export/?format=dpo&ties=keep")
    output = tmp_path / "dpo.jsonl"
    call_command("export_project", project.slug, "--format", "dpo", "--ties", "mark", "--output", str(output))

    assert response.status_code == 200
    assert {r["id"] for r in streamed} == {items[0].external_id, items[1].external_id}
    assert bad.status_code == 400
    assert "ties" in bad.json()["errors"]
    assert [json.loads(line) for line in output.read_text().splitlines()] == streamed


def test_whole_project_writes_on_postgresql_store_the_same_vote_figures(binary_project, monkeypatch):
    project, _ = binary_project
    stored = list(ItemAggregate.objects.order_by("item_id").values_list("vote_tie", "agreement"))
    ItemAggregate.objects.filter(project=project).delete()
    monkeypatch.setattr(services, "COPY_THRESHOLD", 1)  # the COPY-and-merge writer, on PostgreSQL

    services.item_aggregates_recompute(project_id=project.pk)

    assert list(ItemAggregate.objects.order_by("item_id").values_list("vote_tie", "agreement")) == stored
    assert [tie for tie, _ in stored] == [False, True]
