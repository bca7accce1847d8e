"""What each export format holds, and that the filters select the right rows."""

from __future__ import annotations

import json

import pytest

from aggregation.exports.stream import ExportOptions, export_lines
from aggregation.models import ItemAggregate, Provenance
from tests.exports.builders import aggregate_item
from tests.factories import ItemFactory


def rows(project, **options):
    return [json.loads(line) for line in export_lines(project=project, options=ExportOptions(**options))]


def test_dpo_rows_carry_trl_columns_and_figures(labelled_project):
    exported = rows(labelled_project, format="dpo")
    aggregate = ItemAggregate.objects.select_related("item").order_by("item_id").first()
    first = exported[0]
    assert first["id"] == aggregate.item.external_id
    assert first["consensus_margin"] == pytest.approx(aggregate.margin, abs=1e-6)
    assert first["p_chosen"] == pytest.approx(0.5 + aggregate.margin / 4, abs=1e-6)
    assert first["n_annotators"] == 2
    assert first["agreement"] == pytest.approx(0.8)


def test_filters_select_rows(labelled_project):
    first_item = labelled_project.items.order_by("id").first()
    ItemAggregate.objects.filter(item=first_item).update(n_annotators=1, hesitation=0.6)
    all_ids = {r["id"] for r in rows(labelled_project, format="dpo")}

    assert first_item.external_id not in {r["id"] for r in rows(labelled_project, format="dpo", min_annotators=2)}
    assert first_item.external_id not in {r["id"] for r in rows(labelled_project, format="dpo", max_hesitation=0.5)}
    assert len(all_ids) == labelled_project.items.count()
    # margins are 1.0 - 0.01 * index; a threshold of 0.97 keeps the first three items only
    assert len(rows(labelled_project, format="dpo", min_margin=0.97)) == 4


def test_ties_within_tolerance_are_left_out_of_dpo_but_kept_in_soft(project):
    item = ItemFactory(project=project)
    aggregate_item(item=item, scores=[(0.5, 0.3), (0.52, 0.3)])  # ΔS = 0.02 < tie tolerance 0.1

    assert rows(project, format="dpo") == []
    soft = rows(project, format="soft")
    assert len(soft) == 1
    assert soft[0]["p_a_over_b"] == pytest.approx(0.5 - 0.02 / 4, abs=1e-6)


def test_handed_off_items_say_model_handoff_and_filter_by_provenance(labelled_project):
    item = ItemFactory(project=labelled_project)
    aggregate_item(item=item, scores=[(0.9, 0.0), (0.1, 0.8)], n_annotators=0, provenance=Provenance.MODEL_HANDOFF)

    handed = rows(labelled_project, format="dpo", provenance="model_handoff")
    assert [r["id"] for r in handed] == [item.external_id]
    assert handed[0]["provenance"] == "model_handoff"
    assert all(r["provenance"] == "human" for r in rows(labelled_project, format="dpo", provenance="human"))


def test_three_responses_give_all_pairs_or_best_against_worst(project):
    item = ItemFactory(project=project, responses=["low", "high", "middle"])
    aggregate_item(item=item, scores=[(0.1, 0.8), (0.9, 0.05), (0.5, 0.3)])

    all_pairs = rows(project, format="dpo", pairs="all")
    best_worst = rows(project, format="dpo", pairs="best_worst")

    assert {(r["chosen"], r["rejected"]) for r in all_pairs} == {("high", "low"), ("middle", "low"), ("high", "middle")}
    assert [(r["chosen"], r["rejected"]) for r in best_worst] == [("high", "low")]
    assert len({r["id"] for r in all_pairs}) == 3


def test_ifs_export_has_every_response_with_its_aggregate(labelled_project):
    exported = rows(labelled_project, format="ifs")
    first = exported[0]
    operator = labelled_project.aggregation_operator
    assert [r["position"] for r in first["responses"]] == [0, 1]
    (overall,) = [
        a for a in first["responses"][1]["aggregates"] if a["operator"] == operator and a["criterion"] == "overall"
    ]
    assert overall["mu"] == pytest.approx(0.7)
    assert overall["pi"] == pytest.approx(0.2)
    assert overall["score"] == pytest.approx(0.6)


def test_annotations_export_has_raw_labels_with_blind_flags_exposures_order_and_time(labelled_project, annotator):
    exported = rows(labelled_project, format="annotations")
    assert len(exported) == 2 * labelled_project.items.count()
    mine = [r for r in exported if r["annotator"] == annotator.username]
    first = mine[0]
    assert first["blind"] is True
    assert first["exposures"] == []
    assert first["response_order"] == [1, 0]
    assert first["time_spent_ms"] == 4200
    assert {(v["position"], v["criterion"]) for v in first["values"]} == {(0, "overall"), (1, "overall")}
    assert all(0 <= v["mu"] <= 1 for v in first["values"])
