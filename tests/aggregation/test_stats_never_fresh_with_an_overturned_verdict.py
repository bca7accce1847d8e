"""GET /api/projects/{id}/stats/ never says fresh while a block of its answer lags the labels: labels imported step
by step flip the handoff verdict back and forth, the stats are read in the middle of every project run (after the
agreement figures are written, before the suggestion and handoff figures are) and at its end, and every answer that
says ``stale: false`` carries the verdict and the counts the labels in the database give."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.urls import reverse

from annotation.imports.labels import labels_import
from annotation.models import Annotation
from config import events
from projects.models import Membership, Project
from suggestions import receivers
from suggestions.handoff import handoff_preview
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory
from tests.suggestions.helpers import items_create

pytestmark = pytest.mark.django_db

# (annotator, items, choice): the model prefers position 0 on every item, so choice 0 agrees.
STEPS = [
    ("alice", range(0, 20), 0),  # 20 of 20 agree: eligible
    ("bob", range(0, 10), 1),  # ten items now split: 0.75, not eligible
    ("carol", range(20, 25), 0),  # five more items, full agreement: 0.8
    ("bob", range(0, 10), 0),  # bob revises his ten: 1.0, eligible again
    ("dave", range(0, 20), 1),  # every item split: 0.5
    ("eve", range(0, 25), 0),  # majority back with the model: 0.73
]
READER_UID = "tests.stats_reader"


@pytest.fixture
def project(lead) -> Project:
    project = ProjectFactory(
        mode=Project.Mode.BINARY,
        blind_rate=1.0,
        overlap=5,
        handoff_agreement_threshold=0.9,
        handoff_minimum_blind_comparisons=20,
    )
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for item in items_create(project, 25, prefix=f"s{project.pk}"):
        SuggestionFactory(item=item, preferred_position=0)
    return project


@pytest.fixture
def reads(project, lead_client) -> Iterator[list[tuple[dict, dict]]]:
    """Every project run reads the stats before its suggestion side runs: this reader is connected first (the
    suggestions app's receiver again after it), and each read is kept with the verdict the labels give right then."""
    taken: list[tuple[dict, dict]] = []
    url = reverse("api-stats", args=[project.pk])

    def read(*, project_id: int, **_: object) -> None:
        if project_id == project.pk:
            taken.append((lead_client.get(url).json(), handoff_preview(project=project).evaluation))

    events.FIGURES_RECOMPUTED.disconnect(dispatch_uid="suggestions.figures_recomputed")
    events.FIGURES_RECOMPUTED.connect(read, weak=False, dispatch_uid=READER_UID)
    receivers.connect()
    yield taken
    events.FIGURES_RECOMPUTED.disconnect(dispatch_uid=READER_UID)


def _lines(project: Project, who: str, items: range, choice: int) -> list[str]:
    prefix = f"s{project.pk}"
    return [json.dumps({"item": f"{prefix}-{i}", "annotator": who, "mode": "binary", "choice": choice}) for i in items]


def test_no_fresh_answer_carries_a_verdict_the_labels_overturned(
    project, reads, lead_client, django_capture_on_commit_callbacks
) -> None:
    url = reverse("api-stats", args=[project.pk])
    verdicts = []
    for who, items, choice in STEPS:
        with django_capture_on_commit_callbacks(execute=True):
            labels_import(project=project, lines=_lines(project, who, items, choice))
        body = lead_client.get(url).json()
        reads.append((body, handoff_preview(project=project).evaluation))
        verdicts.append(body["handoff"]["eligible"])

    assert verdicts == [True, False, False, True, False, False], "the steps flip the verdict as designed"
    assert len(reads) == 2 * len(STEPS), "one read in the middle of each step's project run, one after it"
    mid_run = [body for body, _ in reads[::2]]
    assert all(body["stale"] for body in mid_run), "mid-run, before the handoff block counted the labels"
    assert all(body["stale_reason"] for body in mid_run)
    labels = Annotation.objects.filter(project=project).count()
    for body, truth in reads:
        if body["stale"]:
            continue
        handoff = body["handoff"]
        assert handoff["eligible"] == truth["eligible"], (handoff, truth)
        assert handoff["blind"]["n"] == truth["blind"]["n"]
        assert body["blind"]["agreement"]["n"] == truth["blind"]["n"]
    final, truth = reads[-1]
    assert not final["stale"]
    assert final["blind"]["agreement"]["n"] == labels == truth["blind"]["n"]
