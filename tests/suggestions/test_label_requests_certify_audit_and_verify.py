"""Label requests end to end through the services: a reproducible draw with recorded inclusion probabilities, blind
answers turned into the stored certification figures (and the stats API), verification answers kept out of them, a
verification-only project certifying nothing, and an audit that suspends a handoff when the model's answers stop
holding up."""

from __future__ import annotations

import pytest
from django.test import Client

from aggregation.models import ItemAggregate, ProjectAggregate, Provenance
from annotation.models import LabelRequest
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership, Project
from suggestions.certification import labeling_figures_recompute
from suggestions.handoff import handoff_apply
from suggestions.models import HandoffDecision
from suggestions.requests import label_requests_draw
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def _project(n_items: int = 30, **settings) -> tuple[Project, list]:
    options = {
        "mode": Project.Mode.BINARY,
        "blind_rate": 0.0,
        "overlap": 1,
        "handoff_agreement_threshold": 0.5,
        "handoff_minimum_blind_comparisons": 10,
    }
    options.update(settings)
    project = ProjectFactory(**options)
    people = [UserFactory(username=f"r{project.pk}-{i}") for i in range(3)]
    for person in people:
        MembershipFactory(project=project, user=person)
    items = items_create(project, n_items, prefix=f"p{project.pk}")
    for index, item in enumerate(items):
        values = [(800, 100), (100, 800)] if index % 2 else [(600, 300), (300, 600)]
        SuggestionFactory(item=item, preferred_position=0, values=values)
    return project, people


def _answer(project: Project, kind: str, choose) -> None:
    for request in LabelRequest.objects.filter(project=project, kind=kind, status=LabelRequest.Status.OPEN):
        annotation_save(
            project=project,
            item=request.item,
            annotator=request.annotator,
            save=SaveRequest(binary_choice=choose(request.item)),
        )


def test_a_draw_is_reproducible_and_records_its_probabilities() -> None:
    project, _ = _project()
    first = label_requests_draw(project=project, kind="certification", size=12, labels_per_item=2)
    assert (first.items_drawn, first.requests, first.population) == (12, 24, 30)
    rows = list(LabelRequest.objects.filter(project=project).values_list("item_id", "annotator_id"))
    assert {p for p in LabelRequest.objects.values_list("inclusion_probability", flat=True)} == {12 / 30}
    per_item = {}
    for item_id, annotator_id in rows:
        per_item.setdefault(item_id, set()).add(annotator_id)
    assert all(len(people) == 2 for people in per_item.values())
    LabelRequest.objects.filter(project=project).delete()
    label_requests_draw(project=project, kind="certification", size=12, labels_per_item=2)
    assert sorted(LabelRequest.objects.filter(project=project).values_list("item_id", "annotator_id")) == sorted(rows)


def test_stratified_calibration_gets_items_from_every_confidence_bin_it_can() -> None:
    project, _ = _project()
    label_requests_draw(project=project, kind="calibration", size=10, labels_per_item=1, by_confidence=True)
    strata = LabelRequest.objects.filter(project=project).values_list("stratum", "inclusion_probability")
    # Two confidences (0.65 and 0.85), 15 items each: equal allocation, 5 from each, π = 5/15.
    assert sorted(set(strata)) == [(1, pytest.approx(1 / 3)), (3, pytest.approx(1 / 3))]


def test_blind_answers_give_the_certification_figures_and_verification_stays_out(lead_of) -> None:
    project, _ = _project()
    label_requests_draw(project=project, kind="certification", size=15, labels_per_item=1)
    drawn = list(LabelRequest.objects.filter(project=project).order_by("item_id").values_list("item_id", flat=True))
    wrong = set(drawn[::5])  # 3 of 15 disagree with the model
    _answer(project, "certification", lambda item: 1 if item.pk in wrong else 0)
    assert not LabelRequest.objects.filter(project=project, status=LabelRequest.Status.OPEN).exists()
    figures = labeling_figures_recompute(project_id=project.pk)
    cert = figures["certification"]
    assert cert["estimate"]["value"] == pytest.approx(12 / 15)
    assert cert["estimate"]["items"] == 15
    low, high = cert["estimate"]["ci"]
    assert low < 0.8 < high
    assert cert["horvitz_thompson"]["value"] == pytest.approx(12 / 15)
    assert cert["certified"] is (low >= 0.5)

    # Verification answers (all "keep") change nothing in the estimate; they give the keep rate.
    label_requests_draw(project=project, kind="verification", size=10, labels_per_item=1)
    _answer(project, "verification", lambda item: 0)
    again = labeling_figures_recompute(project_id=project.pk)
    assert again["certification"]["estimate"] == cert["estimate"]
    assert again["verification"]["keep"] == 1.0
    assert again["verification"]["answers"] > 0

    client = Client()
    client.force_login(lead_of(project))
    stats = client.get(f"/api/projects/{project.pk}/stats/").json()
    assert stats["labeling"]["certification"]["estimate"]["value"] == pytest.approx(12 / 15)
    assert stats["labeling"]["verification"]["keep"] == 1.0


def test_a_verification_only_project_certifies_nothing() -> None:
    project, _ = _project()
    label_requests_draw(project=project, kind="verification", size=20, labels_per_item=2)
    _answer(project, "verification", lambda item: 0)
    figures = labeling_figures_recompute(project_id=project.pk)
    assert figures["certification"]["certified"] is False
    assert figures["certification"]["estimate"]["value"] is None
    assert "no blind evidence" in figures["certification"]["reason"]


def test_an_audit_that_fails_suspends_the_handoff_and_gives_the_items_back() -> None:
    project = ProjectFactory(
        mode=Project.Mode.BINARY, blind_rate=1.0, overlap=1, handoff_minimum_blind_comparisons=20,
        handoff_agreement_threshold=0.8,
    )  # fmt: skip
    first = UserFactory(username=f"a{project.pk}-first")
    MembershipFactory(project=project, user=first)
    items = items_create(project, 50, prefix=f"a{project.pk}")
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[:20]:
        label(project, item, first, 0)
    labeling_figures_recompute(project_id=project.pk)
    from suggestions.figures import suggestion_figures_recompute

    suggestion_figures_recompute(project_id=project.pk)
    handoff_apply(project=project)
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).count()
    assert handed == 30
    for i in range(2):
        MembershipFactory(project=project, user=UserFactory(username=f"a{project.pk}-auditor{i}"))
    draw = label_requests_draw(project=project, kind="audit", rate=1.0, labels_per_item=1)
    assert draw.items_drawn == 30
    # The model's answers no longer hold: the auditors disagree with every one.
    _answer(project, "audit", lambda item: 1)
    labeling_figures_recompute(project_id=project.pk)
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING
    assert not ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).exists()
    decision = HandoffDecision.objects.filter(project=project).first()
    assert decision.action == HandoffDecision.Action.SUSPENDED
    assert "audit" in decision.explanation
    assert not LabelRequest.objects.filter(project=project, kind="audit", status=LabelRequest.Status.OPEN).exists()
    stored = ProjectAggregate.objects.get(project=project).labeling
    assert stored["audit"]["state"] == "suspend"


@pytest.fixture
def lead_of():
    def make(project: Project):
        user = UserFactory(username=f"lead-{project.pk}")
        MembershipFactory(project=project, user=user, role=Membership.Role.LEAD)
        return user

    return make


def test_the_dashboard_card_shows_the_certification_and_the_keep_rate(lead_of) -> None:
    project, _ = _project()
    client = Client()
    client.force_login(lead_of(project))
    empty = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "No label requests yet" in empty
    label_requests_draw(project=project, kind="certification", size=15, labels_per_item=1)
    _answer(project, "certification", lambda item: 0)
    label_requests_draw(project=project, kind="verification", size=5, labels_per_item=1)
    _answer(project, "verification", lambda item: 0)
    labeling_figures_recompute(project_id=project.pk)
    page = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "Certifying the model&#x27;s labels" in page or "Certifying the model's labels" in page
    assert "Model&#x27;s accuracy (Hájek)" in page or "Model's accuracy (Hájek)" in page
    assert "Kept 1.000" in page
    assert "enter none of the figures above" in page


def test_rubber_stamp_signals_flag_fast_accepts() -> None:
    from annotation.models import Annotation
    from suggestions.rubber_stamp import reading_time_ms, rubber_stamp_signals

    project, people = _project(n_items=12)
    items = list(project.items.order_by("pk"))
    for index, item in enumerate(items):
        for person, fast in ((people[0], True), (people[1], index % 4 == 0)):
            Annotation.objects.create(
                project=project, item=item, annotator=person, mode=project.mode, binary_choice=0,
                response_order=[0, 1], suggestion_shown=True, accepted_suggestion=True,
                time_spent_ms=200 if fast else 60_000,
            )  # fmt: skip
    rows = {row["annotator"]: row for row in rubber_stamp_signals(project=project)}
    hasty, careful = rows[people[0].username], rows[people[1].username]
    assert hasty["accept_rate"] == 1.0
    assert hasty["fast_accept_share"] == 1.0
    assert hasty["flagged"] is True
    assert careful["fast_accept_share"] == 0.25
    assert careful["flagged"] is False
    # About ten words of prompt and answers: a quarter of a second is too fast, a minute is not.
    assert 200 < reading_time_ms(10) < 60_000


def test_the_length_baseline_states_a_confidence_for_calibration() -> None:
    from projects.models import Response, Suggestion
    from suggestions.requests import request_population
    from suggestions.services import longest_response_suggestions

    project, _ = _project(n_items=4)
    Suggestion.objects.filter(item__project=project).delete()
    items = list(project.items.order_by("pk"))
    Response.objects.filter(item=items[0], position=0).update(text="x" * 100)
    Response.objects.filter(item=items[0], position=1).update(text="x" * 25)
    longest_response_suggestions(project=project)
    population = request_population(project=project, kind="calibration")
    assert population.confidence[0] == pytest.approx(0.5 + 0.5 * 75 / 100)
    draw = label_requests_draw(project=project, kind="calibration", size=4, labels_per_item=1, by_confidence=True)
    assert draw.items_drawn >= 1


def test_a_handoff_on_certification_needs_it_and_the_card_counts_certified_items() -> None:
    from django.core.exceptions import ValidationError

    from aggregation.exports.card import export_card_facts
    from aggregation.exports.stream import ExportOptions

    project, _ = _project(n_items=40, overlap=3, handoff_agreement_threshold=0.7)
    with pytest.raises(ValidationError, match="Not certified"):
        handoff_apply(project=project, basis="certification")
    label_requests_draw(project=project, kind="certification", size=30, labels_per_item=1)
    _answer(project, "certification", lambda item: 0)  # the people agree with the model on every drawn item
    decision = handoff_apply(project=project, basis="certification")
    assert decision.action == HandoffDecision.Action.HANDED_OFF
    assert decision.figures["basis"] == "certification"
    labeling_figures_recompute(project_id=project.pk)
    from suggestions.handoff import handoff_evaluate

    handoff_evaluate(project_id=project.pk)
    facts = export_card_facts(project=project, options=ExportOptions(format="dpo"))
    assert facts.provenance["model_certified"] > 0
    assert facts.provenance["model_handoff"] == 0
