"""Reads for the lead's suggestion and labelling-engine cards: stored figures only, a fixed number of queries
whatever the project size."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, QuerySet
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _

from aggregation.maths.comparisons import MINIMUM_COMPARISONS
from aggregation.models import ItemAggregate, ProjectAggregate, Provenance
from annotation.models import LabelRequest
from projects.models import Job, Project, Suggestion, SuggestionValue
from projects.selectors import project_get_for_lead
from suggestions.llm import llm_config_for
from suggestions.models import HandoffDecision

AnyUser = AbstractBaseUser | AnonymousUser

# A gap this large (or an interval wholly above 0) means shown agreement overstates agreement with unaided people.
LARGE_GAP = 0.1
RECENT_DECISIONS = 5

# Interval plot geometry (viewBox units).
PLOT_WIDTH = 360
PLOT_LEFT = 96
PLOT_RIGHT = 12
PLOT_ROW = 22


def _figure(raw: Any) -> dict[str, Any]:
    """A stored figure for the card. ``reason`` says why there is no number ("needs 5 comparisons (3 so far)");
    a figure stored before figures were withheld below 5 comparisons is withheld here the same way."""
    raw = raw if isinstance(raw, dict) else {}
    ci = raw.get("ci") if isinstance(raw.get("ci"), list | tuple) and len(raw.get("ci") or ()) == 2 else None
    n = raw.get("n") or 0
    value = raw.get("value")
    reason = raw.get("reason")
    if n < MINIMUM_COMPARISONS and "needed" not in raw:
        value, ci, reason = None, None, f"needs {MINIMUM_COMPARISONS} comparisons ({n} so far)"
    return {
        "value": value,
        "n": n,
        "low": ci[0] if ci else None,
        "high": ci[1] if ci else None,
        "needed": raw.get("needed") or {},
        "reason": reason if value is None else None,
    }


SOURCE_LABELS = {
    "random_sample": gettext_lazy("Random blind sample"),
    "calibration": gettext_lazy("Calibration requests"),
    "certification": gettext_lazy("Certification requests"),
    "audit": gettext_lazy("Audit requests"),
    "verification": gettext_lazy("Blind verification requests"),
    "after_label": gettext_lazy("After-label first saves"),
    "import": gettext_lazy("Imported labels"),
    "other": gettext_lazy("Other unexposed labels"),
}


def blind_source_rows(stored: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's split of unexposed labels by source (suggestions.figures.blind_sources_figure): each source with
    labels, its n, how it enters blind agreement and, for a label-request draw, its own weighted estimate."""
    rows = []
    for source, entry in (stored.get("blind_sources") or {}).items():
        if not isinstance(entry, dict) or not (entry.get("n") or entry.get("in_blind_agreement")):
            continue
        own = entry.get("estimate") or {}
        ci = own.get("ci") or [None, None]
        rows.append(
            {
                "source": source,
                "label": SOURCE_LABELS.get(source, source),
                "n": entry.get("n") or 0,
                "items": entry.get("items") or 0,
                "counted": bool(entry.get("in_blind_agreement")),
                "use": entry.get("use") or "",
                "estimate": own.get("value"),
                "low": ci[0],
                "high": ci[1],
            }
        )
    return rows


def _x(value: float) -> float:
    return round(PLOT_LEFT + max(0.0, min(1.0, value)) * (PLOT_WIDTH - PLOT_LEFT - PLOT_RIGHT), 1)


def _plot(rows: list[tuple[str, str, dict[str, Any]]], threshold: float) -> dict[str, Any]:
    drawn = []
    for index, (label, css, figure) in enumerate(rows):
        y = PLOT_ROW * index + PLOT_ROW // 2 + 4
        drawn.append(
            {
                "label": label,
                "css": css,
                "y": y,
                "text_y": y + 4,
                "has_value": figure["value"] is not None,
                "reason": figure.get("reason"),
                "x": _x(figure["value"]) if figure["value"] is not None else None,
                "x_low": _x(figure["low"]) if figure["low"] is not None else None,
                "x_high": _x(figure["high"]) if figure["high"] is not None else None,
            }
        )
    height = PLOT_ROW * len(rows) + 22
    return {
        "rows": drawn,
        "width": PLOT_WIDTH,
        "height": height,
        "axis_y": height - 16,
        "label_y": height - 3,
        "x0": _x(0.0),
        "x50": _x(0.5),
        "x1": _x(1.0),
        "threshold_x": _x(threshold),
    }


def suggestion_card_context(*, user: AnyUser, project_id: int) -> dict[str, Any]:
    """Everything the card shows, for a lead of the project (Http404 for anyone else)."""
    project: Project = project_get_for_lead(user=user, project_id=project_id)
    aggregate = ProjectAggregate.objects.filter(project=project).only("suggestions", "suggestions_computed_at").first()
    stored: dict[str, Any] = (aggregate.suggestions if aggregate else None) or {}
    # Stored by the figures task: counting a whole project's items on every view would grow with the project.
    counts = stored.get("counts")
    if counts is None:
        # Not computed yet: one EXISTS (it stops at the first row) still tells the empty state apart.
        any_ok = Suggestion.objects.filter(item__project=project, status=Suggestion.Status.OK).exists()
        counts = {"items": None, "ok": None if any_ok else 0, "failed": None}
    job = Job.objects.filter(project=project, kind=Job.Kind.SUGGEST).first()
    decisions = list(HandoffDecision.objects.filter(project=project).select_related("decided_by")[:RECENT_DECISIONS])
    handed_off_items = (
        ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).count()
        if project.phase == Project.Phase.HANDED_OFF
        else 0
    )

    blind = _figure((stored.get("blind") or {}).get("agreement"))
    unaided = _figure((stored.get("unaided") or {}).get("agreement"))
    shown = _figure((stored.get("shown") or {}).get("agreement"))
    gold = _figure((stored.get("gold") or {}).get("agreement"))
    if not gold["n"]:
        gold["reason"] = "no gold items"
    gap = _figure(stored.get("anchoring_gap"))
    human_human = stored.get("human_human") or {}
    hh_blind = _figure(human_human.get("blind"))
    hh_shown = _figure(human_human.get("shown"))
    accept = stored.get("accept") or {}
    handoff = stored.get("handoff") or {}
    gap_large = gap["value"] is not None and (gap["value"] >= LARGE_GAP or (gap["low"] or 0) > 0)
    job_running = job is not None and job.status in (Job.Status.PENDING, Job.Status.RUNNING)
    return {
        "project": project,
        "computed_at": aggregate.suggestions_computed_at if aggregate else None,
        "has_figures": bool(stored.get("blind")),
        "counts": counts,
        "blind": blind,
        "unaided": unaided,
        "blind_sources": blind_source_rows(stored),
        "shown": shown,
        "gold": gold,
        "gap": gap,
        "gap_large": gap_large,
        "human_human_blind": hh_blind,
        "human_human_shown": hh_shown,
        "accept_count": accept.get("count") or 0,
        "accept_rate": accept.get("rate"),
        "handoff": handoff,
        "eligible": bool(handoff.get("eligible")),
        "phase": project.phase,
        "handed_off": project.phase == Project.Phase.HANDED_OFF,
        "collecting": project.phase == Project.Phase.COLLECTING,
        "handed_off_items": handed_off_items,
        "decisions": decisions,
        "job": job,
        "job_running": job_running,
        "job_percent": (round(100 * job.progress_done / job.progress_total) if job and job.progress_total else 0),
        "llm_configured": llm_config_for(project).is_configured,
        "llm_model": llm_config_for(project).model,
        "after_label": project.suggestion_display == Project.SuggestionDisplay.AFTER_LABEL,
        "plot": _plot(
            [
                ("LLM, blind", "blind", blind),
                ("LLM, shown", "shown", shown),
                ("Human, blind", "human", hh_blind),
                ("Human, shown", "human", hh_shown),
                ("LLM vs gold", "gold", gold),
            ],
            project.handoff_agreement_threshold,
        ),
    }


def _estimate_row(label: str, estimate: dict[str, Any] | None) -> dict[str, Any]:
    estimate = estimate or {}
    ci = estimate.get("ci") or [None, None]
    return {
        "label": label,
        "value": estimate.get("value"),
        "low": ci[0],
        "high": ci[1],
        "items": estimate.get("items") or 0,
        "labels": estimate.get("labels") or 0,
    }


def labeling_stored_for_lead(*, user: AnyUser, project_id: int) -> tuple[Project, dict[str, Any]]:
    """The project and its stored labelling-engine figures, for a lead (else 404)."""
    project: Project = project_get_for_lead(user=user, project_id=project_id)
    aggregate = ProjectAggregate.objects.filter(project=project).only("labeling").first()
    return project, (aggregate.labeling if aggregate else None) or {}


def labeling_card_context(*, user: AnyUser, project_id: int) -> dict[str, Any]:
    """The labelling engine's card: calibration, certification, audit and verification, for a lead (else 404)."""
    project, stored = labeling_stored_for_lead(user=user, project_id=project_id)
    requests = dict(
        LabelRequest.objects.filter(project=project)
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )
    certification = stored.get("certification") or {}
    calibration = stored.get("calibration") or {}
    audit = stored.get("audit") or {}
    return {
        "project": project,
        "has_figures": bool(stored),
        "requests": requests,
        "threshold": stored.get("threshold"),
        "certification": certification,
        "certification_rows": [
            _estimate_row("Model's accuracy (Hájek)", certification.get("estimate")),
            _estimate_row("Horvitz-Thompson", certification.get("horvitz_thompson")),
            _estimate_row("Against gold", certification.get("gold")),
        ],
        "calibration_rows": [
            _estimate_row(f"{row['low']:.1f}–{row['high']:.1f}", row) for row in calibration.get("bins") or []
        ],
        "calibration_cut": calibration.get("cut"),
        "audit": audit,
        "audit_row": _estimate_row("Audit (last 100 audited items)", audit.get("estimate"))
        if audit.get("state")
        else None,
        "verification": stored.get("verification") or {},
        "resolution": stored.get("resolution") or {},
        "rubber_stamp": stored.get("rubber_stamp") or [],
        "contracts": _contract_rows(stored.get("contracts") or {}),
    }


#: The contracts in the card's order, with their names.
CONTRACT_NAMES = {
    "selective_risk": _("Selective risk"),
    "no_worse_than_human": _("No worse than a person"),
    "distributional": _("Distributional (IFS)"),
    "budget_first": _("Budget first"),
}


def _contract_rows(contracts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "name": name, **contracts[key]} for key, name in CONTRACT_NAMES.items() if key in contracts]


def suggestions_for_lead(*, user: AnyUser, project_id: int) -> QuerySet[Suggestion]:
    """The project's suggestions with their items and values, for the API's list (leads only: others get 404)."""
    project = project_get_for_lead(user=user, project_id=project_id)
    return (
        Suggestion.objects.filter(item__project=project)
        .select_related("item")
        .prefetch_related(Prefetch("values", queryset=SuggestionValue.objects.select_related("response")))
    )
