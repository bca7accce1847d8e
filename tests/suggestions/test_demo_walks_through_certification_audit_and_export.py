"""The demo, as a lead would run it with the baseline model: seed_demo draws calibration, certification and
verification requests into the two annotators' queues; they answer (blind, as the expert's gold says); the lead
reads calibration and certification, sets a threshold the evidence supports, hands off on certification, draws an
audit of the handed-off items, the annotators answer it, and the lead exports the data with its dataset card."""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from aggregation.models import ItemAggregate, Provenance
from annotation.models import LabelRequest
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import TIE, Item, Membership, Project
from suggestions.certification import labeling_figures_recompute
from suggestions.management.commands.seed_demo import DEMO_SLUG

pytestmark = pytest.mark.django_db


def _values(item: Item, position: int) -> list[dict[str, object]]:
    criterion = item.project.criteria.get()
    prefer = {position: (800, 100), 1 - position: (100, 800)}
    return [
        {"response": r.position, "criterion": criterion.name, "mu": prefer[r.position][0], "nu": prefer[r.position][1]}
        for r in item.responses.all()
    ]


def _gold(item: Item) -> int:
    return 0 if item.gold_position in (None, TIE) else int(item.gold_position)


def _answer(project: Project, kinds: tuple[str, ...], choose: Callable[[LabelRequest], int]) -> int:
    answered = 0
    for request in LabelRequest.objects.filter(
        project=project, kind__in=kinds, status=LabelRequest.Status.OPEN
    ).select_related("item", "annotator"):
        if request.status != LabelRequest.Status.OPEN:
            continue
        annotation_save(
            project=project,
            item=request.item,
            annotator=request.annotator,
            save=SaveRequest(values=_values(request.item, choose(request))),
        )
        answered += 1
    return answered


def test_the_demo_runs_calibration_certification_handoff_with_audit_and_export_with_its_card() -> None:
    call_command("seed_demo", stdout=(out := io.StringIO()))
    assert "label requests: verification" in out.getvalue()
    project = Project.objects.get(slug=DEMO_SLUG)
    drawn = set(LabelRequest.objects.filter(project=project).values_list("kind", flat=True))
    assert drawn == {"calibration", "certification", "verification"}
    people = set(LabelRequest.objects.filter(project=project).values_list("annotator__username", flat=True))
    annotators = set(
        project.memberships.filter(role=Membership.Role.ANNOTATOR).values_list("user__username", flat=True)
    )
    assert people == annotators
    assert len(annotators) >= 2
    # A second seed keeps the draws.
    before = LabelRequest.objects.filter(project=project).count()
    call_command("seed_demo", stdout=io.StringIO())
    assert LabelRequest.objects.filter(project=project).count() == before

    lead = Client()
    lead.force_login(get_user_model().objects.get(username="lead"))
    api = f"/api/projects/{project.pk}"

    # Calibration and certification: both annotators label blind, as the expert's gold says; verification keeps.
    _answer(project, ("calibration", "certification"), lambda r: _gold(r.item))
    _answer(project, ("verification",), lambda r: int(r.machine_preferred))
    assert not LabelRequest.objects.filter(project=project, status=LabelRequest.Status.OPEN).exists()
    labeling_figures_recompute(project_id=project.pk)
    figures = lead.get(f"{api}/stats/").json()["labeling"]
    bins = figures["calibration"]["bins"]
    assert len(bins) == 5
    assert sum(b["items"] for b in bins) == 20
    certification = figures["certification"]
    assert certification["estimate"]["items"] == 20
    low, high = certification["estimate"]["ci"]
    assert 0.0 <= low <= certification["estimate"]["value"] <= high <= 1.0
    # The baseline is weak: the demo's threshold of 0.9 is not certified.
    assert certification["certified"] is False
    assert figures["verification"]["answers"] == 6
    assert figures["verification"]["keep"] == 1.0
    refused = lead.post(f"{api}/handoff/", {"basis": "certification"}, content_type="application/json")
    assert refused.status_code == 400

    # The lead accepts what the evidence supports: a threshold just under the lower bound.
    threshold = math.floor(low * 100) / 100
    patched = lead.patch(f"{api}/", {"handoff_agreement_threshold": threshold}, content_type="application/json")
    assert patched.status_code == 200, patched.content
    handed = lead.post(f"{api}/handoff/", {"basis": "certification"}, content_type="application/json")
    assert handed.status_code in (200, 201), handed.content
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF
    handed_items = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).count()
    assert handed_items > 0

    # The audit: every handed-off item, one blind label each, answered as gold says.
    audit = lead.post(
        f"{api}/requests/", {"kind": "audit", "rate": 1.0, "labels_per_item": 1}, content_type="application/json"
    )
    assert audit.status_code in (200, 201), audit.content
    assert audit.json()["items_drawn"] == handed_items
    assert _answer(project, ("audit",), lambda r: _gold(r.item)) == handed_items
    labeling_figures_recompute(project_id=project.pk)
    audited = lead.get(f"{api}/stats/").json()["labeling"]["audit"]
    assert audited["answers"] == handed_items
    assert audited["state"] in ("collecting", "passing", "suspend")
    assert audited["estimate"]["items"] == min(handed_items, 100)

    # Export with its card.
    project.refresh_from_db()
    exported = lead.get(f"{api}/export/", {"format": "annotations"})
    assert exported.status_code == 200
    lines = b"".join(exported.streaming_content).decode().splitlines()
    assert lines
    card = lead.get(f"{api}/export/card/", {"format": "annotations"})
    assert card.status_code == 200
    text = card.content.decode()
    assert text.startswith("---")
    assert "certif" in text.lower()
    assert "audit" in text.lower()
