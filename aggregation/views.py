"""The lead's pages: dashboard (page and self-refreshing fragment), item review and project settings.

Views stay thin: selectors read (with the lead check), projects.services write, and the helpers below only turn
stored aggregates into what the templates and charts show.
"""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from aggregation.cards import dashboard_card
from aggregation.figures import svg
from aggregation.forms import CriteriaForm, MemberAddForm, ProjectSettingsForm
from aggregation.maths import minimums
from aggregation.people_selectors import former_member_ids
from aggregation.selectors import Dashboard, dashboard_get, item_review_get, response_name, settings_get
from annotation.notes.selectors import item_notes_for_lead, open_flags_for_lead
from annotation.rendering import markdown_render, prompt_render
from config.replica import replica_lag_seconds, replica_reads
from projects.models import TIE, Membership
from projects.services import criteria_set, membership_set, project_update

AGREEMENT_FIGURES = (
    ("pairwise_with_ties", "Pairwise, tie is an answer"),
    ("pairwise_without_ties", "Pairwise, ties left out"),
    ("alpha_interval", "Krippendorff α, interval"),
    ("alpha_nominal", "Krippendorff α, nominal"),
    ("ifs", "IFS agreement"),
)
# Keys of an agreement-over-time point that place it on the x axis rather than being a series.
_TIME_KEYS = (
    "date",
    "day",
    "at",
    "t",
    "time",
    "bucket",
    "labels",
    "labels_done",
    "n_labels",
    "n",
    "x",
    "overlap_items",
)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def figure(raw: Any) -> dict[str, Any]:
    """A stored {"value", "n", "ci": [low, high]} read defensively: anything missing becomes None."""
    raw = raw if isinstance(raw, dict) else {}
    ci = raw.get("ci")
    low, high = (ci[0], ci[1]) if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)
    n = raw.get("n")
    return {
        "value": _number(raw.get("value")),
        "n": n if isinstance(n, int) and not isinstance(n, bool) else None,
        "low": _number(low),
        "high": _number(high),
        "computed": _number(raw.get("value")) is not None,
    }


NEEDS_OVERLAP = "needs 2 annotators on the same item"


def figure_missing_reason(key: str, row: dict[str, Any], *, project: Any, stored: dict[str, Any]) -> str:
    """Why a computed agreement figure has no value, in words, so the page never prints a number it does not have."""
    if not isinstance(stored.get(key), dict):
        return "not computed yet"
    if key == "ifs" and project.mode != "ifs":
        return "needs IFS slider labels (this project labels in another mode)"
    if not row["n"]:
        if key == "pairwise_without_ties" and figure(stored.get("pairwise_with_ties"))["n"]:
            return "needs 2 annotators on the same item who do not both answer tie"
        return NEEDS_OVERLAP
    if key.startswith("alpha"):
        return "needs some variety among the labels (α is undefined when every label is the same)"
    return "too little data"


def _agreement_context(dashboard: Dashboard) -> dict[str, Any]:
    stored = dashboard.agreement
    shown = {key: minimums.agreement_shown(_dict(stored.get(key))) for key, _ in AGREEMENT_FIGURES}
    rows = [{"key": key, "label": label, **figure(shown[key])} for key, label in AGREEMENT_FIGURES]
    for row in rows:
        withheld = shown[row["key"]].get("reason")
        row["missing"] = (
            None
            if row["computed"]
            else (
                "needs IFS slider labels (this project labels in another mode)"
                if row["key"] == "ifs" and dashboard.project.mode != "ifs"
                else withheld
                if isinstance(withheld, str) and withheld
                else figure_missing_reason(row["key"], row, project=dashboard.project, stored=stored)
            )
        )
    lows = [r["low"] if r["low"] is not None else r["value"] for r in rows if r["value"] is not None]
    axis_low = max(-1.0, math.floor(min([0.0, *lows]) * 5) / 5)
    chart = svg.interval_plot(
        rows=[
            svg.Interval(
                label=r["label"],
                value=r["value"],
                low=r["low"],
                high=r["high"],
                note=f"n = {r['n']}" if r["n"] is not None else "",
            )
            for r in rows
        ],
        title="Agreement figures with 95 % intervals",
        x_label="agreement (1 = full; α 0 = chance)",
        low=axis_low,
        high=1.0,
        reference=0.0 if axis_low < 0 else None,
    )
    return {
        "agreement_rows": rows,
        "agreement_svg": mark_safe(chart),
        "agreement_computed": bool(stored),
        "agreement_any_value": any(r["computed"] for r in rows),
    }


def _progress_context(dashboard: Dashboard) -> dict[str, Any]:
    progress = dashboard.progress
    names = {str(m.user_id): m.user.get_username() for m in dashboard.members}
    rows: list[tuple[str, int, int]] = []
    # The aggregation service stores a list under "annotators"; an older shape kept a dict under "per_annotator".
    listed = progress.get("annotators")
    keyed = _dict(progress.get("per_annotator"))
    entries = (
        [(str(_dict(e).get("annotator_id", "")), e) for e in listed]
        if isinstance(listed, list)
        else [(str(k), v) for k, v in keyed.items()]
    )
    for key, raw in entries:
        if isinstance(raw, dict):
            count = next(
                (n for k in ("labels", "labels_done", "done", "n", "count") if (n := _number(raw.get(k))) is not None),
                0.0,
            )
            skipped = _number(raw.get("skipped")) or 0.0
            name = raw.get("username") or raw.get("name") or names.get(key, key)
        else:
            count, skipped, name = _number(raw) or 0.0, 0.0, names.get(key, key)
        rows.append((str(name), int(count), int(skipped)))
    rows.sort(key=lambda row: (-row[1], row[0]))
    top = max([count for _, count, _ in rows] or [0]) or 1
    annotator_rows = [
        {"name": name, "count": count, "skipped": skipped, "percent": round(100 * count / top, 1)}
        for name, count, skipped in rows
    ]

    def share(done_key: str, total_key: str) -> dict[str, Any]:
        done, total = _number(progress.get(done_key)), _number(progress.get(total_key))
        percent = round(100 * done / total, 1) if done is not None and total else None
        return {"done": done, "total": total, "percent": min(percent, 100.0) if percent is not None else None}

    return {
        "progress_computed": bool(progress),
        "items_progress": share("items_done", "items_total"),
        "labels_progress": share("labels_done", "labels_needed"),
        "annotator_progress": annotator_rows,
        "judgment_kinds": _dict(progress.get("judgment_kinds")),
    }


def _point_withheld(point: dict[str, Any]) -> bool:
    """A day before the overlap supports agreement is drawn without values, as the figures are withheld (a point
    stored without its overlap counts as none, like a figure)."""
    return minimums.agreement_needs(minimums.overlap_items_of({"items": point.get("overlap_items")})) is not None


def _over_time_has_values(points: Any) -> bool:
    return isinstance(points, list) and any(
        _number(_dict(raw).get("value") if isinstance(raw, dict) else raw) is not None
        for point in points
        if isinstance(point, dict) and not _point_withheld(point)
        for key, raw in point.items()
        if key not in _TIME_KEYS
    )


def _over_time_chart(points: Any) -> str:
    title = "Agreement over time"
    if not isinstance(points, list) or not points:
        return svg.line_chart(series=[], title=title)
    series: dict[str, list[tuple[float, float | None]]] = {}
    x_labels: list[str] = []
    for index, point in enumerate(points):
        if not isinstance(point, dict):
            continue
        x_labels.append(str(next((point[k] for k in _TIME_KEYS if k in point), index + 1)))
        withheld = _point_withheld(point)
        for key, raw in point.items():
            if key in _TIME_KEYS:
                continue
            value = None if withheld else _number(raw.get("value")) if isinstance(raw, dict) else _number(raw)
            series.setdefault(key, []).append((float(index), value))
    labels = dict(AGREEMENT_FIGURES)
    return svg.line_chart(
        series=[svg.Series(name=labels.get(key, key.replace("_", " ")), points=pts) for key, pts in series.items()],
        title=title,
        x_labels=x_labels,
        # min() of a list: with one argument min(0.0, *[]) would try to iterate the float (a 500 before agreement
        # can be computed, e.g. after the first label).
        low=min([0.0, *[y for pts in series.values() for _, y in pts if y is not None]]),
    )


def _stored_histograms(plots: dict[str, Any], dashboard: Dashboard) -> list[tuple[str, list[float], list[int]]]:
    """(criterion, edges, counts) in the project's criterion order, from either stored shape.

    The aggregation service writes {"hesitation": {"bins": edges, "criteria": [{"name", "counts", …}]}}; a keyed
    {"hesitation_histogram": {name: {"edges", "counts"}}} is read too.
    """

    def numbers(values: Any) -> list[float]:
        return [float(v) for v in values if _number(v) is not None] if isinstance(values, list) else []

    found: list[tuple[str, list[float], list[int]]] = []
    hesitation = _dict(plots.get("hesitation"))
    if isinstance(hesitation.get("criteria"), list):
        edges = numbers(hesitation.get("bins"))
        for entry in hesitation["criteria"]:
            entry = _dict(entry)
            found.append((str(entry.get("name", "")), edges, [int(c) for c in numbers(entry.get("counts"))]))
    for name, raw in _dict(plots.get("hesitation_histogram")).items():
        raw = _dict(raw)
        found.append((str(name), numbers(raw.get("edges")), [int(c) for c in numbers(raw.get("counts"))]))
    # Stored JSON keys come back in whatever order the database keeps them: show criteria in the project's order.
    order = {criterion.name: index for index, criterion in enumerate(dashboard.criteria)}
    return sorted(found, key=lambda entry: (order.get(entry[0], len(order)), entry[0]))


def _plots_context(dashboard: Dashboard) -> dict[str, Any]:
    plots = dashboard.plots
    histograms = []
    for name, edges, counts in _stored_histograms(plots, dashboard):
        chart = svg.histogram(
            edges=edges, counts=counts, title=f"Hesitation π for {name}", x_label="hesitation π = 1 − μ − ν"
        )
        histograms.append({"criterion": name, "svg": mark_safe(chart)})
    # Only the weights the data supports (aggregation.maths.minimums); the others say what they need instead.
    aggregates = [a for a in dashboard.annotator_aggregates if a.weight is not None]
    weights = svg.bar_chart(
        labels=[a.annotator.get_username() for a in aggregates],
        values=[a.weight for a in aggregates],
        title="Annotator weights (Eq. 8)",
    )
    return {
        "plots_computed": bool(plots),
        "histograms": histograms,
        "over_time_svg": mark_safe(_over_time_chart(plots.get("agreement_over_time"))),
        "over_time_missing": (
            None
            if _over_time_has_values(plots.get("agreement_over_time"))
            else minimums.agreement_needs(
                minimums.overlap_items_of(_dict(dashboard.agreement.get("pairwise_with_ties")))
            )
            or NEEDS_OVERLAP
        ),
        "histograms_missing": (
            "needs IFS slider labels (this project labels in another mode)" if dashboard.project.mode != "ifs" else None
        ),
        "weights_svg": mark_safe(weights),
        "weights_shown": bool(aggregates),
        "weights_missing": next(
            (getattr(a, "weight_reason", None) for a in dashboard.annotator_aggregates if a.weight is None), None
        ),
    }


def _suggestions_context(dashboard: Dashboard, *, user: Any) -> dict[str, Any]:
    stored = dashboard.suggestions
    # Registered by the suggestions app (above this one), so the dashboard shows its card without importing it.
    card_template, card = dashboard_card("suggestions", user=user, project_id=dashboard.project.pk)
    labeling_template, labeling = dashboard_card("labeling", user=user, project_id=dashboard.project.pk)
    study_template, study = dashboard_card("study", user=user, project_id=dashboard.project.pk)
    blind = _dict(stored.get("blind"))
    shown = _dict(stored.get("shown"))
    human_human = _dict(stored.get("human_human"))
    return {
        "suggestions_card_template": card_template,
        "card": card,
        "labeling_card_template": labeling_template,
        "labeling": labeling,
        "study_card_template": study_template,
        **study,
        "llm_figures": [
            ("Blind agreement with the LLM", figure(blind.get("agreement"))),
            ("Shown agreement with the LLM", figure(shown.get("agreement"))),
            ("Anchoring gap (shown − blind)", figure(stored.get("anchoring_gap"))),
            ("Human-human agreement, blind items", figure(human_human.get("blind", human_human))),
        ],
    }


def dashboard_context(dashboard: Dashboard, *, user: Any) -> dict[str, Any]:
    project = dashboard.project
    for aggregate in dashboard.annotator_aggregates:
        ms = aggregate.median_time_ms
        aggregate.median_time_s = None if ms is None else ms / 1000  # type: ignore[attr-defined]
    open_flags, open_flags_count = open_flags_for_lead(project=project)
    return {
        "project": project,
        "dashboard": dashboard,
        "review": dashboard.review,
        "open_flags": open_flags,
        "open_flags_count": open_flags_count,
        "annotators": dashboard.annotator_aggregates,
        "has_labels": project.labelling_started_at is not None or bool(dashboard.annotator_aggregates),
        "computed_at": dashboard.aggregate.computed_at if dashboard.aggregate else None,
        **_progress_context(dashboard),
        **_agreement_context(dashboard),
        **_plots_context(dashboard),
        **_suggestions_context(dashboard, user=user),
    }


@login_required
def dashboard(request: HttpRequest, project_id: int) -> HttpResponse:
    # Read from the replica when there is one (config/replica.py), saying how far behind it was.
    with replica_reads() as from_replica:
        data = dashboard_get(user=request.user, project_id=project_id)
        context = dashboard_context(data, user=request.user)
        context["replica_lag"] = replica_lag_seconds() if from_replica else None
        # Rendered inside too: the templates' lazy querysets are dashboard reads as well.
        htmx = request.htmx  # type: ignore[attr-defined]
        return render(request, "dashboard/partials/figures.html" if htmx else "dashboard/page.html", context)


def _suggestion_of(item: Any) -> Any:
    try:
        return item.suggestion
    except item.__class__.suggestion.RelatedObjectDoesNotExist:
        return None


@login_required
def item_review(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    review = item_review_get(user=request.user, project_id=project_id, item_id=item_id)
    responses = list(review.item.responses.all())
    criteria = review.criteria
    suggestion = _suggestion_of(review.item)
    names = {r.position: response_name(position=r.position, model=r.model_name) for r in responses}

    def name(position: int | None) -> str:
        return names.get(position, response_name(position=position)) if position is not None else "—"

    # Every annotator's (μ, ν) laid out per response × criterion, the way the aggregate below is laid out.
    former = former_member_ids(project=review.project, user_ids={a.annotator_id for a in review.annotations})
    label_rows = []
    for annotation in review.annotations:
        values = sorted(annotation.values.all(), key=lambda v: (v.response.position, v.criterion.position))
        label_rows.append(
            {
                "annotation": annotation,
                "former_member": annotation.annotator_id in former,
                "seen_order": [name(position) for position in annotation.response_order or []],
                "choice_name": name(annotation.binary_choice),
                "values": [
                    {
                        "position": v.response.position,
                        "name": name(v.response.position),
                        "criterion": v.criterion.name,
                        "mu": v.mu,
                        "nu": v.nu,
                        "pi": 1000 - v.mu - v.nu,
                    }
                    for v in values
                ],
            }
        )
    # Aggregates are floats in [0, 1]; shown like the labels above, in per-mille.
    aggregate_cells = {
        (ra.response.position, ra.criterion_id): {
            "mu": round(ra.mu * 1000),
            "nu": round(ra.nu * 1000),
            "pi": max(0, 1000 - round(ra.mu * 1000) - round(ra.nu * 1000)),
        }
        for ra in review.response_aggregates
    }
    return render(
        request,
        "dashboard/item_review.html",
        {
            "project": review.project,
            "item": review.item,
            "responses": [
                {"response": r, "name": names[r.position], "html": markdown_render(r.text)} for r in responses
            ],
            "prompt_html": prompt_render(prompt=review.item.prompt, messages=review.item.prompt_messages),
            "notes": item_notes_for_lead(project=review.project, item=review.item),
            "wanted": review.project.overlap + review.item.extra_labels,
            "gold_name": name(review.item.gold_position),
            "best_name": name(review.aggregate.best_position if review.aggregate else None),
            "criteria": criteria,
            "suggestion": suggestion,
            "suggestion_name": name(suggestion.preferred_position) if suggestion else "",
            "label_rows": label_rows,
            "aggregate": review.aggregate,
            "p_best_reason": minimums.item_preference_needs(review.aggregate.n_annotators)
            if review.aggregate
            else None,
            "aggregate_rows": [
                {
                    "response": response,
                    "name": names[response.position],
                    "overall": aggregate_cells.get((response.position, None)),
                    "per_criterion": [aggregate_cells.get((response.position, c.id)) for c in criteria],
                }
                for response in responses
            ],
            "TIE": TIE,
        },
    )


def _apply_errors(form: Any, error: ValidationError) -> None:
    """Put a service's ValidationError on the form's fields (unknown fields on the form as a whole)."""
    if hasattr(error, "error_dict"):
        for field_name, field_errors in error.message_dict.items():
            target = field_name if field_name in form.fields else None
            for message in field_errors:
                form.add_error(target, message)
    else:
        form.add_error(None, error)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project, criteria, members = settings_get(user=request.user, project_id=project_id)
    which = request.POST.get("form") if request.method == "POST" else None
    if which not in (None, "settings", "criteria", "member"):
        which = None
    settings_form = ProjectSettingsForm(request.POST if which == "settings" else None, project=project)
    criteria_form = CriteriaForm(
        request.POST if which == "criteria" else None, initial={"criteria": CriteriaForm.initial_text(criteria)}
    )
    member_form = MemberAddForm(request.POST if which == "member" else None)
    saved = None
    if which == "settings" and settings_form.is_valid():
        try:
            project = project_update(project=project, changes=settings_form.changes())
            saved = "settings"
        except ValidationError as error:
            _apply_errors(settings_form, error)
    elif which == "criteria" and criteria_form.is_valid():
        try:
            criteria_set(project=project, criteria=criteria_form.cleaned_data["criteria"])
            saved = "criteria"
        except ValidationError as error:
            _apply_errors(criteria_form, error)
    elif which == "member" and member_form.is_valid():
        try:
            user = member_form.cleaned_data["username"]
            membership_set(project=project, user=user, role=member_form.cleaned_data["role"])
            saved = "member"
        except ValidationError as error:
            _apply_errors(member_form, error)

    if saved and not request.htmx:  # type: ignore[attr-defined]
        messages.success(
            request, {"settings": "Settings saved.", "criteria": "Criteria saved."}.get(saved, "Member added.")
        )
        return redirect(reverse("project_settings", kwargs={"project_id": project.pk}))
    if saved:
        # HTMX: the saved form comes back fresh, rebuilt from what is now stored.
        project, criteria, members = settings_get(user=request.user, project_id=project.pk)
        settings_form = ProjectSettingsForm(project=project)
        criteria_form = CriteriaForm(initial={"criteria": CriteriaForm.initial_text(criteria)})
        member_form = MemberAddForm()
    context = {
        "project": project,
        "settings_form": settings_form,
        "criteria_form": criteria_form,
        "member_form": member_form,
        "members": members,
        "saved": saved,
        "roles": Membership.Role,
    }
    if request.htmx and which:  # type: ignore[attr-defined]
        # HTMX swaps only 2xx answers by default, so a form with errors comes back as 200 and shows them in place.
        return render(request, f"dashboard/partials/{which}_form.html", context)
    return render(request, "dashboard/settings.html", context, status=400 if which and not saved else 200)
