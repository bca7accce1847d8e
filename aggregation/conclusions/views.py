"""The conclusions page for leads (leaderboard with its plot, prediction-powered figures, annotator-population
agreement), its CSV and SVG downloads, and the JSON API. Every view reaches the figures through
``conclusions_get_for_lead``: annotators and outsiders get 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aggregation.conclusions.selectors import SAMPLES, Sample, check_cluster, check_prior, conclusions_get_for_lead
from aggregation.figures import svg
from aggregation.maths.leaderboard import DEFAULT_PRIOR
from config.csv_safe import csv_lines
from config.input_limits import whole_number
from projects.models import Project

CSV_COLUMNS = ("table", "source", "figure", "model", "opponent", "value", "ci_low", "ci_high", "n", "method", "extra")


class _Query(NamedTuple):
    criterion_id: int | None
    sample: Sample
    cluster: str
    prior: float


def _query(params: QueryDict) -> _Query:
    """``criterion`` (a criterion id), ``sample``, ``cluster`` and ``prior`` from the query string, or ValueError
    naming the parameter and what it takes."""
    criterion = params.get("criterion") or None
    sample = params.get("sample") or "blind"
    if sample not in SAMPLES:
        raise ValueError(f"sample: one of {', '.join(SAMPLES)}.")
    criterion_id = whole_number(criterion) if criterion is not None else None
    if criterion is not None and criterion_id is None:
        raise ValueError("criterion: a criterion id.")
    cluster = check_cluster(params.get("cluster") or "prompt")
    raw_prior = params.get("prior")
    try:
        number = float(raw_prior) if raw_prior else DEFAULT_PRIOR
    except ValueError:
        number = -1.0  # not a number: refused by check_prior, with its sentence
    prior = check_prior(number)
    return _Query(criterion_id, sample, cluster, prior)


def _figures(request: HttpRequest, project_id: int) -> tuple[Project, dict[str, Any]]:
    """The figures the page's query string asks for, for a lead of the project; a bad parameter is a 404 on pages."""
    try:
        query = _query(request.GET)
    except ValueError as bad:
        raise Http404(str(bad)) from bad
    return conclusions_get_for_lead(user=request.user, project_id=project_id, **query._asdict())


def leaderboard_plot(figures: dict[str, Any]) -> str:
    """Mean win rate against the other models, with its 95 % interval, per model and source."""
    rows: list[svg.Interval] = []
    for entry in figures["leaderboard"].values():
        for row in entry.get("rows", []):
            low, high = row["win_rate_ci"]
            rows.append(svg.Interval(f"{row['model']} · {entry['label']}", row["win_rate"], low, high))
    return svg.interval_plot(rows=rows, title="Mean win rate against the other models (95 %)", reference=0.5)


def csv_rows(figures: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for source, entry in figures["leaderboard"].items():
        for row in entry.get("rows", []):
            for figure in ("strength", "win_rate"):
                low, high = row[f"{figure}_ci"]
                yield {
                    "table": "leaderboard",
                    "source": source,
                    "figure": figure,
                    "model": row["model"],
                    "value": row[figure],
                    "ci_low": low,
                    "ci_high": high,
                    "n": entry["comparisons"],
                    "method": entry["method"],
                    "extra": (
                        f"clusters={entry['clusters']}; cluster={figures['cluster']}; prior={entry['prior']}; "
                        f"rank={row['rank']}; rank_ci={row['rank_ci'][0]}-{row['rank_ci'][1]}"
                    ),
                }
        styled = entry.get("style_controlled")
        for row in styled["rows"] if styled else []:
            yield {
                "table": "leaderboard_style_controlled",
                "source": source,
                "figure": "strength",
                "model": row["model"],
                "value": row["strength"],
                "ci_low": row["strength_ci"][0],
                "ci_high": row["strength_ci"][1],
                "n": entry["comparisons"],
                "method": entry["method"],
            }
        for effect in styled["effects"] if styled else []:
            yield {
                "table": "style_effect",
                "source": source,
                "figure": effect["feature"],
                "value": effect["effect"],
                "ci_low": effect["effect_ci"][0],
                "ci_high": effect["effect_ci"][1],
                "n": entry["comparisons"],
                "method": entry["method"],
            }
        matrix = entry.get("matrix")
        if matrix:
            for a, model in enumerate(matrix["models"]):
                for b, opponent in enumerate(matrix["models"]):
                    if a != b:
                        low, high = matrix["win_rate_ci"][a][b]
                        yield {
                            "table": "win_rate_matrix",
                            "source": source,
                            "figure": "win_rate",
                            "model": model,
                            "opponent": opponent,
                            "value": matrix["win_rate"][a][b],
                            "ci_low": low,
                            "ci_high": high,
                            "n": matrix["comparisons"][a][b],
                            "method": entry["method"],
                            "extra": f"observed={matrix['observed'][a][b]}",
                        }
    ppi = figures["prediction_powered"]
    for f in ppi["figures"]:
        if "value" in f:
            yield {
                "table": "prediction_powered",
                "source": figures["sample"],
                "figure": f["key"],
                "value": f["value"],
                "ci_low": f["ci"][0],
                "ci_high": f["ci"][1],
                "n": f["human_labelled_items"],
                "method": f["method"],
                "extra": (
                    f"human_only={f['human_only']['value']} [{f['human_only']['ci'][0]}, {f['human_only']['ci'][1]}]; "
                    f"llm_only={f['llm_only']}; lambda={f['lambda']}; items={f['items']}; "
                    f"effective_human_items={f['effective_human_items']}"
                ),
            }
    h = figures["human_agreement"]
    for key in ("ci_items", "ci_annotator_population"):
        if h["value"] is not None and h[key] is not None:
            yield {
                "table": "human_agreement",
                "figure": f"pairwise_with_ties:{key}",
                "value": h["value"],
                "ci_low": h[key][0],
                "ci_high": h[key][1],
                "n": h["pairs"],
                "extra": h["claims"][key],
            }


@login_required
@require_GET
def conclusions_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project, figures = _figures(request, project_id)
    context = {
        "project": project,
        "figures": figures,
        "sources": list(figures["leaderboard"].items()),
        "plot": mark_safe(leaderboard_plot(figures)),  # built by aggregation.figures.svg, which escapes every label
        "criteria": list(project.criteria.order_by("position", "pk")),
        "samples": SAMPLES,
        "query": request.GET.urlencode(),
    }
    return render(request, "dashboard/conclusions.html", context)


@login_required
@require_GET
def conclusions_csv(request: HttpRequest, project_id: int) -> StreamingHttpResponse:
    project, figures = _figures(request, project_id)
    response = StreamingHttpResponse(csv_lines(CSV_COLUMNS, csv_rows(figures)), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-conclusions.csv"'
    return response


@login_required
@require_GET
def conclusions_svg(request: HttpRequest, project_id: int) -> HttpResponse:
    project, figures = _figures(request, project_id)
    response = HttpResponse(leaderboard_plot(figures), content_type="image/svg+xml")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-leaderboard.svg"'
    return response


class ConclusionsApi(APIView):
    """The model leaderboard per source of labels (people: all, blind, shown; gold; the LLM's suggestions):
    Davidson/Bradley-Terry strengths with simultaneous rank intervals, a style-controlled fit (length and markdown as
    covariates) with each style effect, mean win rates and the win-rate matrix with 95 % intervals clustered by
    ``cluster`` (the prompt by default);
    the prediction-powered dataset figures (PPI++, inclusion-weighted) beside the human-only and LLM-only ones with
    the effective number of human labels; and human-human agreement with the item interval and the
    annotator-population interval. ``format=csv`` gives the same as CSV. Leads only."""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[
            OpenApiParameter("criterion", int, description="A criterion id; default: criteria combined."),
            OpenApiParameter("sample", str, enum=list(SAMPLES), description="The human sample for PPI."),
            OpenApiParameter(
                "cluster",
                str,
                description="What the leaderboard's intervals treat as independent: prompt (default: items with the "
                "same prompt text are one cluster), item, or metadata:<field>.",
            ),
            OpenApiParameter(
                "prior",
                float,
                description=f"The strengths' Gaussian prior (default {DEFAULT_PRIOR}; 0: plain maximum likelihood).",
            ),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="The figures."),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The same figures as CSV rows."),
        },
    )
    def get(self, request: Request, project_id: int) -> HttpResponse:
        output = request.query_params.get("format") or "json"
        if output not in ("json", "csv"):
            raise ValidationError({"format": "json or csv."})
        try:
            query = _query(request.query_params)
        except ValueError as bad:
            name, _, reason = str(bad).partition(": ")
            raise ValidationError({name: reason}) from bad
        project, figures = conclusions_get_for_lead(user=request.user, project_id=project_id, **query._asdict())
        if output == "csv":
            response = HttpResponse("".join(csv_lines(CSV_COLUMNS, csv_rows(figures))), content_type="text/csv")
            response["Content-Disposition"] = f'attachment; filename="{project.slug}-conclusions.csv"'
            return response
        return Response(figures)
