"""The method study's report: its labels loaded onto the common scale, the figures of
``aggregation.maths.method_comparison``, and their CSV rows and SVG plots for a paper.

The figures are cached under a key that changes with every saved label and every answered repeat (count and
latest update), so a reload costs three queries and a new label is seen at once; a study's labels number in the
thousands, so a miss is a fraction of a second of numpy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Exists, Max, OuterRef

from aggregation.figures import svg
from aggregation.maths.agreement import signed_preference_likert
from aggregation.maths.method_comparison import Labels, consistency_figures, method_figures
from aggregation.maths.self_consistency import signed_distance, sk_distance
from annotation.method_study.models import MethodStudy, StudyCell
from annotation.method_study.selectors import method_label
from annotation.models import Annotation, JudgmentValue, Repeat, RepeatValue
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


def _choice_signed(mode: str, choice: int | None, likert: int | None, points: int) -> float:
    """A binary or Likert judgment as its signed preference; NaN when it has none (a skipped repeat)."""
    if mode == "binary":
        return {0: 1.0, 1: -1.0, TIE: 0.0}.get(choice, np.nan) if choice is not None else np.nan
    return float(signed_preference_likert([likert], points)[0]) if likert else np.nan


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
        s = ifs.get(pk, np.nan) if mode == "ifs" else _choice_signed(mode, choice, likert, project.likert_points)
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


def _study_repeats(study: MethodStudy) -> Any:
    return Repeat.objects.filter(
        project_id=study.project_id, answered_at__isnull=False, annotation__in=_study_annotations(study)
    )


def _ifs_distances(pairs: dict[int, int]) -> dict[int, float]:
    """Repeat id → mean distance over the response × criterion values both judgments have (``pairs``: repeat id →
    original annotation id)."""
    first = {
        (annotation, response, criterion): (mu, nu)
        for annotation, response, criterion, mu, nu in JudgmentValue.objects.filter(
            annotation_id__in=list(pairs.values())
        ).values_list("annotation_id", "response_id", "criterion_id", "mu", "nu")
    }
    found: dict[int, list[float]] = {}
    again = RepeatValue.objects.filter(repeat_id__in=list(pairs)).values_list(
        "repeat_id", "response_id", "criterion_id", "mu", "nu"
    )
    for repeat, response, criterion, mu, nu in again:
        original = first.get((pairs[repeat], response, criterion))
        if original is not None:
            d = sk_distance((original[0] - mu) / 1000.0, (original[1] - nu) / 1000.0)
            found.setdefault(repeat, []).append(float(d))
    return {repeat: float(np.mean(values)) for repeat, values in found.items()}


def study_consistency(*, study: MethodStudy) -> dict[str, Any]:
    """Self-consistency per method from the answered repeats of the plan's labels (the repeat was judged with the
    method of its original), with the project's repeat settings and, without repeats, why there are none."""
    project = study.project
    rows = list(
        _study_repeats(study).values_list(
            "pk",
            "annotation_id",
            "annotator_id",
            "annotation__mode",
            "annotation__binary_choice",
            "annotation__likert_value",
            "binary_choice",
            "likert_value",
        )
    )
    ifs = _ifs_distances({r[0]: r[1] for r in rows if r[3] == "ifs"})
    distance = [
        ifs.get(pk, np.nan)
        if mode == "ifs"
        else float(
            signed_distance(
                _choice_signed(mode, choice, likert, project.likert_points),
                _choice_signed(mode, again_choice, again_likert, project.likert_points),
            )
        )
        for pk, _, _, mode, choice, likert, again_choice, again_likert in rows
    ]
    figures = consistency_figures(
        distance, [r[2] for r in rows], [study.methods.index(r[3]) for r in rows], study.methods
    )
    empty = None
    if figures["repeats"] == 0:
        empty = (
            "The repeat rate is 0: no repeats are served." if project.repeat_rate <= 0 else "No repeats answered yet."
        )
    return {
        **figures,
        "repeat_rate": project.repeat_rate,
        "delay_items": project.repeat_delay_items,
        "delay_minutes": project.repeat_delay_minutes,
        "empty": empty,
    }


def method_study_report(*, study: MethodStudy) -> dict[str, Any]:
    """The report's JSON: the figures, the self-consistency of the repeats, the methods' names and the plan's
    progress."""
    state = _study_annotations(study).aggregate(n=Count("pk"), latest=Max("updated_at"))
    repeats = _study_repeats(study).aggregate(n=Count("pk"), latest=Max("answered_at"))
    # The settings version too: a changed tie tolerance, Likert scale or repeat rate changes the report.
    latest = state["latest"].isoformat() if state["latest"] else ""
    answered = f"{repeats['n']}:{repeats['latest'].isoformat() if repeats['latest'] else ''}"
    key = f"method-study-report:{study.pk}:{study.project.settings_version}:{state['n']}:{latest}:{answered}"
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
        "self_consistency": study_consistency(study=study),
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
    consistency = report["self_consistency"]
    # The rate first: with no repeats (rate 0, or none answered yet) the per-method rows below are empty (n = 0).
    yield _row(
        "self_consistency", "", "", "repeat_rate", {"value": consistency["repeat_rate"], "n": consistency["repeats"]}
    )
    for entry in consistency["methods"]:
        yield _row("self_consistency", entry["method"], "", "self_consistency", entry)
    for row in consistency["paired"]:
        yield _row("paired_difference", row["second"], row["first"], row["figure"], row)
    for row in consistency["per_annotator"]:
        yield _row(
            "annotator",
            row["method"],
            f"annotator {row['annotator']}",
            "self_consistency",
            {"value": row["self_consistency"], "n": row["repeats"]},
        )


# --- SVG ----------------------------------------------------------------------------------------------------------

PLOTS = ("gold_agreement", "agreement", "time", "paired", "fatigue", "self_consistency")


def _interval(label: str, estimate: dict[str, Any]) -> svg.Interval:
    ci = estimate.get("ci") or (None, None)
    return svg.Interval(label=label, value=estimate.get("value"), low=ci[0], high=ci[1], note=f"n = {estimate['n']}")


SHORT_FIGURES = {
    "alpha_interval": "α interval",
    "alpha_nominal": "α nominal",
    "pairwise_without_ties": "pairwise",
    "gold_agreement": "gold",
    "peer_agreement": "others",
    "self_consistency": "consistency",
}


def report_plot(report: dict[str, Any], name: str) -> str:
    """One plot of the report as standalone SVG (``name`` from ``PLOTS``). Rows are named by the methods' short
    names (ifs, binary, likert) so the labels fit beside the plot."""
    methods = report["figures"]["methods"]
    if name == "gold_agreement":
        rows = [_interval(e["method"], e["gold_agreement"]) for e in methods]
        return svg.interval_plot(
            rows=rows,
            title="Agreement with gold per method (mean over annotators, 95 %)",
            x_label="share of labels agreeing with gold (0 to 1)",
            y_label="method",
        )
    if name == "agreement":
        rows = [
            _interval(f"{e['method']}: {SHORT_FIGURES[figure]}", e["agreement"][figure])
            for e in methods
            for figure in ("alpha_interval", "alpha_nominal", "pairwise_without_ties")
        ]
        return svg.interval_plot(
            rows=rows,
            title="Agreement on the common scale per method (95 %)",
            low=-0.2,
            x_label="α, or share of agreeing pairs (1 = full)",
            y_label="method: figure",
        )
    if name == "time":
        rows = [_interval(e["method"], e["seconds_per_item"]) for e in methods]
        values = [r.high if r.high is not None else r.value for r in rows]
        high = max([v for v in values if v is not None] + [1.0])
        return svg.interval_plot(
            rows=rows,
            title="Seconds per item per method (95 %)",
            high=float(high) * 1.1,
            x_label="time per item (seconds)",
            y_label="method",
        )
    if name == "paired":
        rows = [
            _interval(f"{r['second']} − {r['first']}: {SHORT_FIGURES[r['figure']]}", r)
            for r in report["figures"]["paired"] + report["self_consistency"]["paired"]
            if r["figure"] != "seconds_per_item"
        ]
        return svg.interval_plot(
            rows=rows,
            title="Paired differences within annotators (95 %)",
            low=-0.5,
            high=0.5,
            reference=0.0,
            x_label="difference of the two methods in the figure's unit (0 = none)",
            y_label="methods compared: figure",
        )
    if name == "self_consistency":
        rows = [_interval(e["method"], e) for e in report["self_consistency"]["methods"]]
        return svg.interval_plot(
            rows=rows,
            title="Self-consistency per method, from unannounced repeats (95 %)",
            x_label="1 − mean distance to the repeat (0 to 1)",
            y_label="method",
        )
    if name == "fatigue":
        bins = report["figures"]["fatigue"]["by_position"]
        series = [svg.Series(name="agreement with gold", points=[(b["from"], b["gold_agreement"]) for b in bins])]
        return svg.line_chart(
            series=series,
            title="Agreement with gold against position in the session",
            x_labels=[f"item {b['from']:.0f}" for b in bins],
            x_label="position in the annotator's session (items)",
            y_label="share agreeing with gold (0 to 1)",
        )
    raise KeyError(name)
