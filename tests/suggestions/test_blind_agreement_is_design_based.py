"""Blind agreement is a design-based estimate over the fixed random blind sample: calibration that oversamples
low-confidence items biases the pooled figure of every unexposed label and not the design-based one, whose 95 %
interval covers the truth; in the database, calibration answers move unaided agreement and leave blind agreement, the
handoff and the per-annotator figures where the random sample puts them, and the sources split counts each.

The simulation is tests/suggestions/blind_design_simulation.py (``--runs`` for the full Monte-Carlo)."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from aggregation.maths.comparisons import design_agreement
from aggregation.models import AnnotatorAggregate
from annotation.models import LabelRequest
from projects.models import Membership, Project
from suggestions.figures import comparisons_load, suggestion_figures_recompute
from suggestions.handoff import handoff_evaluate
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.blind_design_simulation import Scenario, summarise
from tests.suggestions.helpers import items_create, label

RUNS = 1000  # Monte-Carlo standard error of a coverage: 0.7 %


@pytest.fixture(scope="module")
def table() -> dict:
    return summarise(Scenario(), RUNS)


def test_the_pooled_figure_is_biased_low_by_the_oversampled_calibration(table) -> None:
    old = table["old"]
    assert old["bias"] < -4 * old["bias_se"], old
    assert old["bias"] <= -0.02, old
    assert old["coverage"] < 0.935, old


def test_the_design_based_figure_is_unbiased_and_covers_at_95_percent(table) -> None:
    new = table["new"]
    assert abs(new["bias"]) <= 4 * new["bias_se"], new
    assert 0.935 <= new["coverage"] <= 0.965, new


@pytest.mark.django_db
def test_calibration_answers_move_unaided_agreement_and_not_blind_agreement(lead, lead_client) -> None:
    project = ProjectFactory(
        mode=Project.Mode.BINARY, blind_rate=0.5, overlap=1, handoff_minimum_blind_comparisons=10,
        handoff_agreement_threshold=0.8,
    )  # fmt: skip
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"d{project.pk}-{k}") for k in range(2)]
    for person in people:
        MembershipFactory(project=project, user=person)
    items = items_create(project, 60, prefix=f"d{project.pk}")
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    sample = [item for item in items if item.is_blind]
    others = [item for item in items if not item.is_blind]
    assert len(sample) >= 20
    assert len(others) >= 20
    # The random sample: the model agrees with 9 in 10 of the people's labels.
    for index, item in enumerate(sample[:20]):
        label(project, item, people[0], 1 if index % 10 == 0 else 0)
    suggestion_figures_recompute(project_id=project.pk)
    before = handoff_evaluate(project_id=project.pk)
    assert before["eligible"] is True

    # Calibration by confidence lands on hard items the model gets wrong: answered blind, all disagreeing.
    now = timezone.now()
    for item in others[:20]:
        label(project, item, people[1], 1)
        LabelRequest.objects.create(
            project=project, item=item, annotator=people[1], kind="calibration", status="answered",
            inclusion_probability=0.5, stratum=0, machine_preferred=0, final_preferred=1, answered_at=now,
        )  # fmt: skip
    figures = suggestion_figures_recompute(project_id=project.pk)
    after = handoff_evaluate(project_id=project.pk)

    comparisons = comparisons_load(project=project)
    sample_rows = comparisons.in_sample
    expected = design_agreement(
        comparisons.match[sample_rows], comparisons.item_ids[sample_rows], comparisons.probability[sample_rows]
    )
    blind = figures["blind"]["agreement"]
    assert blind["value"] == pytest.approx(expected.value) == pytest.approx(0.9)
    assert blind["n"] == 20
    assert blind["items"] == 20
    assert figures["unaided"]["agreement"]["value"] == pytest.approx(18 / 40)
    assert after["eligible"] is True, "calibration answers do not overturn the random sample's verdict"
    assert after["blind"]["value"] == pytest.approx(0.9)

    sources = figures["blind_sources"]
    assert sources["random_sample"]["n"] == 20
    assert sources["random_sample"]["in_blind_agreement"]
    assert sources["calibration"]["n"] == 20
    assert not sources["calibration"]["in_blind_agreement"]
    assert sources["calibration"]["estimate"]["value"] == pytest.approx(0.0), "its own Hájek estimate beside it"
    # The anchoring gap and the per-annotator figures read the random sample only.
    assert figures["anchoring_gap"]["blind"]["n"] == 20
    assert np.isclose(figures["per_annotator"][str(people[0].pk)]["blind_agreement"], 0.9)
    assert str(people[1].pk) not in figures["per_annotator"]
    assert not AnnotatorAggregate.objects.filter(project=project, annotator=people[1], blind_n__gt=0).exists()

    # The stats API and the card say the same, source by source.
    stats = lead_client.get(reverse("api-stats", args=[project.pk])).json()
    assert stats["blind"]["agreement"]["value"] == pytest.approx(0.9)
    assert stats["unaided"]["agreement"]["value"] == pytest.approx(18 / 40)
    assert stats["blind_sources"]["calibration"]["n"] == 20
    assert stats["blind_sources"]["random_sample"]["use"] == "weighted by the blind sample's inclusion probability"
    card = lead_client.get(reverse("suggestion_card", args=[project.pk])).content.decode()
    assert "Unaided (every unexposed label)" in card
    assert "Calibration requests" in card
