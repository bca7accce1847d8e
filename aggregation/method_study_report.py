"""The method study's report: its labels loaded onto the common scale, the figures of
``aggregation.method_comparison``, and their CSV rows and SVG plots for a paper.

The figures are cached under a key that changes with every saved label (count and latest update), so a reload
costs two queries and a new label is seen at once; a study's labels number in the thousands, so a miss is a
fraction of a second of numpy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Exists, Max, OuterRef

from aggregation import svg
from aggregation.agreement import signed_preference_likert
from aggregation.method_comparison import Labels, method_figures
from annotation.crossover_models import MethodStudy, StudyCell
from annotation.crossover_selectors import method_label
from annotation.models import Annotation, JudgmentValue
from projects.models import TIE

CACHE_SECONDS = 3600


def _study_annotations(study: MethodStudy) -> Any:
    planned = StudyCell.objects.filter(
        study=study, item_id=OuterRef("item_id"), annotator_id=OuterRef("annotator_id"), method=OuterRef("mode")
    )
    return Annotation.objects.filter(project_id=study.project_id).filter(Exists(planned))


def _ifs_signed(annotation_ids: list[int]) -> dict[int, float]:
    """s = (S_0 − S_1)/2 with S the criterion-weighted μ − ν (responses at positions 0 and 1)."""
    scores: dict[tuple[int, int], float] = {}
    values = JudgmentValue.objects.filter(annotation_id__in=annotation_ids, response__position__in=(0, 1)).values_list(
        "annotation_id", "response__position", "criterion__weight", "mu", "nu"
    )
    for annotation_id, position, weight, mu, nu in values.iterator(chunk_size=5000):
        key = (annotation_id, position)
        scores[key] = scores.get(key, 0.0) + weight * (mu - nu) / 1000.0
    return {a: 0.5 * (scores[(a, 0)] - scores[(a, 1)]) for a in annotation_ids if (a, 0) in scores and (a, 1) in scores}


def _gold_sign(position: int | None) -> float:
    return {0: 1.0, 1: -1.0, TIE: 0.0}.get(position, np.nan) if position is not None else np.nan


def study_labels(*, study: MethodStudy) -> Labels:
    """Every saved label of the plan on the common scale, with its place in the annotator's session (the order of
    first saves) and its time. Labels that cannot be put on the scale (a choice beyond the first two responses, an
    IFS label missing a value) are left out."""
    project = study.project
    rows = list(
        _study_annotations(study)
        .order_by("annotator_id", "created_at", "pk")
        .values_list("pk", "item_id", "annotator_id", "mode", "binary_choice", "likert_value", "time_spent_ms")
    )
    ifs = _ifs_signed([r[0] for r in rows if r[3] == "ifs"])
    gold = dict(project.items.filter(pk__in={r[1] for r in rows}).values_list("pk", "gold_position"))
    columns: dict[str, list[Any]] = {
        k: [] for k in ("item", "annotator", "method", "position", "seconds", "signed", "gold")
    }
    place: dict[int, int] = {}
    for pk, item, annotator, mode, choice, likert, spent in rows:
        position = place.get(annotator, 0)
        place[annotator] = position + 1
        if mode == "ifs":
            s = ifs.get(pk, np.nan)
        elif mode == "binary":
            s = {0: 1.0, 1: -1.0, TIE: 0.0}.get(choice, np.nan)
        else:
            s = float(signed_preference_likert([likert or 1], project.likert_points)[0]) if likert else np.nan
        if not np.isfinite(s):
            continue
        for key, value in (
            ("item", item),
            ("annotator", annotator),
            ("method", study.methods.index(mode)),
            ("position", position),
            ("seconds", spent / 1000.0),
            ("signed", s),
            ("gold", _gold_sign(gold.get(item))),
        ):
            columns[key].append(value)
    return Labels.from_lists(methods=study.methods, tie_band=project.tie_tolerance / 2.0, **columns)


def method_study_report(*, study: MethodStudy) -> dict[str, Any]:
    """The report's JSON: the figures, plus the methods' names and the plan's progress."""
    state = _study_annotations(study).aggregate(n=Count("pk"), latest=Max("updated_at"))
    # The settings version too: a changed tie tolerance or Likert scale changes the figures of the same labels.
    latest = state["latest"].isoformat() if state["latest"] else ""
    key = f"method-study-report:{study.pk}:{study.project.settings_version}:{state['n']}:{latest}"
    cached = cache.get(key)
    if cached is not None:
        return dict(cached)
    figures = method_figures(study_labels(study=study)).as_dict()
    report = {
        "methods": study.methods,
        "method_labels": {m: method_label(m, study.project.likert_points) for m in study.methods},
        "planned": StudyCell.objects.filter(study=study).count(),
        "saved": state["n"],
        **{"figures": figures},
    }
    cache.set(key, report, CACHE_SECONDS)
    return report


# --- CSV ----------------------------------------------------------------------------------------------------------

FIGURE_COLUMNS = ("section", "method", "compared_with", "figure", "value", "n", "ci_low", "ci_high")


def _row(section: str, method: str, other: str, figure: str, estimate: dict[str, Any]) -> dict[str, Any]:
    ci = estimate.get("ci") or (None, None)
    return {
        "section": section,
        "method": method,
        "compared_with": other,
        "figure": figure,
        "value": estimate.get("value"),
        "n": estimate.get("n"),
        "ci_low": ci[0],
        "ci_high": ci[1],
    }


def figure_rows(report: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every figure of the report as one CSV row (value, n and the 95 % interval)."""
    figures = report["figures"]
    for entry in figures["methods"]:
        method = entry["method"]
        for name in ("labels", "annotators", "items"):
            yield _row("count", method, "", name, {"value": entry[name], "n": entry[name]})
        for name, estimate in entry["agreement"].items():
            yield _row("agreement", method, "", name, estimate)
        for name in ("gold_agreement", "peer_agreement", "seconds_per_item"):
            yield _row("per_annotator_mean", method, "", name, entry[name])
    for row in figures["paired"]:
        yield _row("paired_difference", row["second"], row["first"], row["figure"], row)
    fatigue = figures["fatigue"]
    for name, estimate in fatigue["session"].items():
        yield _row("fatigue_session", "", "", name, estimate)
    for method, slopes in fatigue["per_method"].items():
        for name, estimate in slopes.items():
            yield _row("fatigue_within_method", method, "", name, estimate)
    for bin_ in fatigue["by_position"]:
        label = f"positions {bin_['from']:.0f}-{bin_['to']:.0f}"
        yield _row("by_position", "", label, "seconds", {"value": bin_["seconds"], "n": bin_["labels"]})
        yield _row("by_position", "", label, "gold_agreement", {"value": bin_["gold_agreement"], "n": bin_["labels"]})
    for row in figures["per_annotator"]:
        for name in ("gold_agreement", "peer_agreement", "seconds_per_item", "labels"):
            yield _row("annotator", row["method"], f"annotator {row['annotator']}", name, {"value": row[name]})


# --- SVG ----------------------------------------------------------------------------------------------------------

PLOTS = ("gold_agreement", "agreement", "time", "paired", "fatigue")


def _interval(label: str, estimate: dict[str, Any]) -> svg.Interval:
    ci = estimate.get("ci") or (None, None)
    return svg.Interval(label=label, value=estimate.get("value"), low=ci[0], high=ci[1], note=f"n = {estimate['n']}")


SHORT_FIGURES = {
    "alpha_interval": "α interval",
    "alpha_nominal": "α nominal",
    "pairwise_without_ties": "pairwise",
    "gold_agreement": "gold",
    "peer_agreement": "others",
}


def report_plot(report: dict[str, Any], name: str) -> str:
    """One plot of the report as standalone SVG (``name`` from ``PLOTS``). Rows are named by the methods' short
    names (ifs, binary, likert) so the labels fit beside the plot."""
    methods = report["figures"]["methods"]
    if name == "gold_agreement":
        rows = [_interval(e["method"], e["gold_agreement"]) for e in methods]
        return svg.interval_plot(rows=rows, title="Agreement with gold per method (mean over annotators, 95 %)")
    if name == "agreement":
        rows = [
            _interval(f"{e['method']}: {SHORT_FIGURES[figure]}", e["agreement"][figure])
            for e in methods
            for figure in ("alpha_interval", "alpha_nominal", "pairwise_without_ties")
        ]
        return svg.interval_plot(rows=rows, title="Agreement on the common scale per method (95 %)", low=-0.2)
    if name == "time":
        rows = [_interval(e["method"], e["seconds_per_item"]) for e in methods]
        values = [r.high if r.high is not None else r.value for r in rows]
        high = max([v for v in values if v is not None] + [1.0])
        return svg.interval_plot(rows=rows, title="Seconds per item per method (95 %)", high=float(high) * 1.1)
    if name == "paired":
        rows = [
            _interval(f"{r['second']} − {r['first']}: {SHORT_FIGURES[r['figure']]}", r)
            for r in report["figures"]["paired"]
            if r["figure"] != "seconds_per_item"
        ]
        return svg.interval_plot(
            rows=rows, title="Paired differences within annotators (95 %)", low=-0.5, high=0.5, reference=0.0
        )
    if name == "fatigue":
        bins = report["figures"]["fatigue"]["by_position"]
        series = [svg.Series(name="agreement with gold", points=[(b["from"], b["gold_agreement"]) for b in bins])]
        return svg.line_chart(series=series, title="Agreement with gold against position in the session")
    raise KeyError(name)
