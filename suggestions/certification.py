"""The labelling engine's figures from answered label requests, and the audit's suspension of a handoff.

Evidence is every answered calibration, certification or audit request whose answer was saved blind (the person's
annotation carries no exposure: checked here again, not only trusted from the page), on the latest draw of its kind
(a draw's inclusion probabilities describe that draw only). Per item, the model's agreement with the blind people is
the share of their answers equal to the model's answer at the draw; against gold, 1/0 where the item has gold. The
maths is in aggregation.maths.accuracy and aggregation.maths.certification (Hájek with Horvitz-Thompson beside it,
clustered by
item; calibration per confidence bin; the lowest certifiable confidence; certification; audit). Verification answers
are read separately, for the keep and change rates only: aggregation.maths.certification.evidence_mask drops them.

The lead's threshold for certification and audit is the project's handoff threshold, and the minimum number of
items the handoff's minimum of blind comparisons: one bar for every decision that lets the model label alone.

Stored on ``ProjectAggregate.labeling``, read by ``/api/projects/{id}/stats/`` and the dashboard. When the audit's
sequential test (aggregation.maths.certification.audit_check) finds the model's agreement below the threshold while the
project is handed off, :func:`handoff_suspend` takes the items back to people: the model's aggregates are removed,
labelling resumes, the open audit requests are withdrawn, and a ``suspended`` handoff decision tells the leads why
(the dashboard's handoff history shows it; automatic handoff does not fire again until a lead acts); once that
commits, every lead with an address gets an email saying so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from aggregation.maths import accuracy, certification, sampling
from aggregation.models import ItemAggregate, ProjectAggregate, Provenance, ResponseAggregate
from annotation.models import LabelRequest, ResolutionChoice
from config import events
from projects.models import Item, Membership, Project
from suggestions import evidence
from suggestions.contracts import contracts_figures
from suggestions.models import HandoffDecision
from suggestions.requests import label_requests_withdraw
from suggestions.rubber_stamp import rubber_stamp_signals

#: The audit judges the last this many audited items, so a drop in accuracy after a good start shows.
AUDIT_WINDOW = 100


def labeling_figures(*, project: Project) -> dict[str, Any]:
    """Every labelling-engine figure of the project as JSON (module docstring)."""
    rows = evidence.answered_rows(project)
    threshold = float(project.handoff_agreement_threshold)
    minimum = int(project.handoff_minimum_blind_comparisons)
    out: dict[str, Any] = {"threshold": threshold, "minimum": minimum, "computed_at": timezone.now().isoformat()}

    draw = evidence.latest_draw(project, LabelRequest.Kind.CALIBRATION)
    cal = evidence.request_evidence(rows, LabelRequest.Kind.CALIBRATION, draw)
    calibration: dict[str, Any] = {"draw": draw, "answers": len(cal), "bins": [], "cut": None}
    if cal:
        d = evidence.per_item(cal)
        edges = sampling.DEFAULT_CONFIDENCE_EDGES
        if not np.isnan(d["confidence"]).all():
            conf = np.where(np.isnan(d["confidence"]), -1.0, d["confidence"])
            bins = certification.calibration_curve(
                d["share"], d["probability"], conf, edges, strata=d["stratum"], trials=d["labels"]
            )
            calibration["bins"] = [b.as_dict() for b in bins]
            cut = certification.lowest_certifiable_confidence(
                d["share"], d["probability"], conf, edges, threshold=threshold, minimum=minimum,
                strata=d["stratum"], trials=d["labels"],
            )  # fmt: skip
            calibration["cut"] = cut.cut
        calibration["overall"] = evidence.request_hajek(cal).as_dict()
    out["calibration"] = calibration

    draw = evidence.latest_draw(project, LabelRequest.Kind.CERTIFICATION)
    cert = evidence.request_evidence(rows, LabelRequest.Kind.CERTIFICATION, draw)
    empty = accuracy.hajek(np.array([]), np.array([]))
    estimate, gold, ht = empty, empty, empty
    if cert and draw is not None:
        d = evidence.per_item(cert)
        estimate = evidence.request_hajek(cert)
        size = evidence.population_size(project, LabelRequest.Kind.CERTIFICATION, draw)
        ht = accuracy.horvitz_thompson(
            d["share"], d["probability"], strata=d["stratum"], trials=d["labels"], population_size=size
        )
        gold = accuracy.hajek(d["gold"], d["probability"], strata=d["stratum"])
    decision = certification.certification_decision(estimate, threshold=threshold, minimum=minimum)
    out["certification"] = {
        "draw": draw,
        "answers": len(cert),
        **decision.as_dict(),
        "horvitz_thompson": ht.as_dict(),
        "gold": gold.as_dict(),
    }

    draw = evidence.latest_draw(project, LabelRequest.Kind.AUDIT)
    aud = evidence.request_evidence(rows, LabelRequest.Kind.AUDIT, draw)
    audit: dict[str, Any] = {"draw": draw, "answers": len(aud), "state": None}
    if aud:
        d = evidence.per_item(aud)
        status = certification.audit_check(
            d["share"], d["probability"], threshold=threshold, minimum=minimum, window=AUDIT_WINDOW, trials=d["labels"]
        )
        audit.update(status.as_dict())
    out["audit"] = audit

    ver = [r for r in rows if r["kind"] == LabelRequest.Kind.VERIFICATION]
    rates = certification.verification_rates(
        [float(r["final_preferred"] == r["machine_preferred"]) for r in ver], [r["item_id"] for r in ver]
    )
    out["verification"] = rates.as_dict()
    # The after-label resolution step: kept or changed, with the model's different label on screen.
    choices = list(ResolutionChoice.objects.filter(project=project).values_list("kept", "item_id"))
    resolution = certification.verification_rates([float(k) for k, _ in choices], [i for _, i in choices])
    out["resolution"] = resolution.as_dict()
    out["rubber_stamp"] = rubber_stamp_signals(project=project)
    out["contracts"] = contracts_figures(project=project, rows=rows, calibration=calibration)
    return out


@transaction.atomic
def handoff_suspend(*, project: Project, reason: str, figures: dict[str, Any]) -> HandoffDecision | None:
    """Take a handoff back after a failed audit (module docstring); None when the project is not handed off."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.phase != Project.Phase.HANDED_OFF:
        return None
    handed = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF)
    item_ids = list(handed.values_list("item_id", flat=True))
    ResponseAggregate.objects.filter(item_id__in=item_ids).delete()
    handed.delete()
    project.phase = Project.Phase.COLLECTING
    project.save(update_fields=["phase", "updated_at"])
    label_requests_withdraw(project=project, kind=LabelRequest.Kind.AUDIT)
    labelled = list(Item.objects.filter(pk__in=item_ids, annotation_count__gt=0).values_list("id", flat=True))
    if labelled:
        events.labels_changed(project_id=project.pk, item_ids=labelled)
    decision = HandoffDecision.objects.create(
        project=project,
        action=HandoffDecision.Action.SUSPENDED,
        rule=project.handoff_rule,
        explanation=f"Handoff suspended by the audit: {reason}. {len(item_ids)} items go back to people.",
        figures=figures,
        items_affected=len(item_ids),
    )
    events.project_event(
        project_id=project.pk,
        name="audit.suspended",
        data={"decision_id": decision.pk, "reason": reason, "items": len(item_ids)},
    )
    # After commit: a rolled-back suspension tells nobody, and a mail server that fails is logged, not re-raised
    # into the save that triggered the audit.
    transaction.on_commit(lambda: _mail_leads(project_id=project.pk, decision_id=decision.pk), robust=True)
    return decision


def _mail_leads(*, project_id: int, decision_id: int) -> int:
    """Mail the project's leads (those with an address) that the audit suspended its handoff; how many were sent."""
    decision = HandoffDecision.objects.select_related("project").get(pk=decision_id, project_id=project_id)
    project = decision.project
    recipients = sorted(
        {
            email
            for email in Membership.objects.filter(project=project, role=Membership.Role.LEAD).values_list(
                "user__email", flat=True
            )
            if email
        }
    )
    if not recipients:
        return 0
    link = settings.PENUMBRA_BASE_URL + reverse("dashboard", kwargs={"project_id": project.pk})
    body = (
        f"{decision.explanation}\n\n"
        f"Labelling has resumed: the handed-off items are back in the annotators' queues and automatic handoff will "
        f"not fire again until a lead acts. The project's dashboard shows the audit's figures:\n{link}\n"
    )
    return send_mail(
        subject=f"[Penumbra] {project.name}: the audit suspended the handoff",
        message=body,
        from_email=None,
        recipient_list=recipients,
    )


@transaction.atomic
def labeling_figures_recompute(*, project_id: int) -> dict[str, Any] | None:
    """Compute and store the figures; suspend the handoff when the audit says so."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    figures = labeling_figures(project=project)
    aggregate, _ = ProjectAggregate.objects.get_or_create(project=project)
    ProjectAggregate.objects.filter(pk=aggregate.pk).update(labeling=figures)
    audit = figures["audit"]
    if audit.get("state") == "suspend":
        handoff_suspend(project=project, reason=audit["reason"], figures=audit)
    return figures


__all__ = ["AUDIT_WINDOW", "handoff_suspend", "labeling_figures", "labeling_figures_recompute"]
