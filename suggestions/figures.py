"""Human-vs-LLM comparisons and the suggestion figures of a project (ProjectAggregate.suggestions; its one writer).

A comparison is one annotation of an item that has an ok suggestion: does the annotator's preferred response match
the LLM's? IFS: the response with the higher criterion-weighted S = μ−ν, a tie when the top two differ by less
than the project's tie tolerance; binary: their choice; Likert: their side of the centre (the centre is a tie).
A comparison is *blind* (unexposed) when the judgment had no suggestion exposure before it was saved (the annotation
services keep ``Annotation.suggestion_shown``: any save or revision after an exposure makes it shown for good). An
annotation saved again after an exposure (the after-label resolution step) still has its unaided judgment in its
revisions: that one is its blind comparison, and its current value its shown one (suggestions.blind_sources).

Which blind comparisons count (suggestions.blind_sources tags each with its source):
* **blind agreement**, the headline, the handoff rule, the anchoring gap and the per-annotator figures: a
  design-based estimate over the fixed random blind sample (aggregation.maths.comparisons.design_agreement), each
  sampled item weighted by 1/π. Labels from label requests enter only through their own Hájek estimates, shown beside
  it (suggestions.certification); after-label first saves and imports have no inclusion probability and do not enter.
* **unaided agreement**: every unexposed label pooled, whatever its source. It describes those labels, not the
  population (a calibration draw that oversamples hard items pulls it down), and no decision reads it.

What the three headline figures measure (the card says the same in one sentence each):
* blind agreement: how often the model agrees with unaided people. Not its accuracy: people err too.
* human-human agreement: how often two people agree on the same item, the ceiling for model-human agreement on a
  subjective task (not 1).
* model vs gold: how often the suggestion equals the item's gold preference, the model's accuracy against the
  reference answer, on the items that have one.
Each has an interval over items (aggregation.maths.intervals) and is withheld below 5 comparisons.

Everything is read in bulk, one query per table, and computed with numpy over the whole project.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from aggregation.maths import agreement
from aggregation.maths.comparisons import agreement_estimate, anchoring_gap, design_agreement, design_figure, figure
from aggregation.maths.ifs import UNDEFINED, preferred_response
from aggregation.models import AnnotatorAggregate, ProjectAggregate
from annotation.models import Annotation, JudgmentValue
from projects.models import PERMILLE, TIE, Item, Project, Suggestion
from suggestions import blind_sources
from suggestions.evidence import request_estimates

# docs/DESIGN.md: the gap is reported only when both sides have at least this many comparisons.
GAP_MINIMUM_PER_SIDE = 5


@dataclass(frozen=True)
class Comparisons:
    """One row per annotation of an item with an ok suggestion and a defined human preference."""

    item_ids: np.ndarray
    annotator_ids: np.ndarray
    human: np.ndarray  # preferred stored position or TIE
    llm: np.ndarray
    shown: np.ndarray  # bool
    accepted: np.ndarray  # bool
    undefined: int  # annotations whose preference could not be read (incomplete values)
    sample: np.ndarray | None = None  # bool: the item is in the fixed random blind sample
    probability: np.ndarray | None = None  # the item's blind inclusion probability (0 outside the sample)
    source: np.ndarray | None = None  # str per row (suggestions.blind_sources; "shown" for an exposed row)

    def __post_init__(self) -> None:
        n = self.human.size
        # Comparisons built without a design (tests of the figures alone) have no random sample.
        if self.sample is None:
            object.__setattr__(self, "sample", np.zeros(n, dtype=bool))
        if self.probability is None:
            object.__setattr__(self, "probability", np.zeros(n))
        if self.source is None:
            object.__setattr__(self, "source", np.where(self.shown, "shown", "other").astype(object))

    @property
    def in_sample(self) -> np.ndarray:
        """Blind comparisons on items of the random blind sample: what blind agreement is estimated from."""
        assert self.sample is not None
        return ~self.shown & self.sample

    @property
    def match(self) -> np.ndarray:
        return self.human == self.llm

    def __len__(self) -> int:
        return int(self.human.size)


def _empty_comparisons(undefined: int = 0) -> Comparisons:
    empty_int = np.zeros(0, dtype=np.int64)
    empty_bool = np.zeros(0, dtype=bool)
    return Comparisons(empty_int, empty_int, empty_int, empty_int, empty_bool, empty_bool, undefined)


def likert_preference(values: np.ndarray, points: int) -> np.ndarray:
    """Likert 1..k (1 = position 0 strongly preferred) → preferred position 0 or 1, TIE at the centre."""
    centre = (points + 1) / 2
    return np.where(values < centre, 0, np.where(values > centre, 1, TIE)).astype(np.int64)


def comparisons_load(*, project: Project) -> Comparisons:
    """Read the project's suggestions, annotations and (for IFS) judgment values in bulk and compare them."""
    suggestions = dict(
        Suggestion.objects.filter(item__project=project, status=Suggestion.Status.OK).values_list(
            "item_id", "preferred_position"
        )
    )
    if not suggestions:
        return _empty_comparisons()
    rows = list(
        Annotation.objects.filter(project=project, item_id__in=list(suggestions))
        .values_list(
            "id",
            "item_id",
            "annotator_id",
            "mode",
            "binary_choice",
            "likert_value",
            "response_order",
            "suggestion_shown",
            "accepted_suggestion",
            "source",
        )
        .order_by("id")
    )
    if not rows:
        return _empty_comparisons()
    n = len(rows)
    annotation_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    item_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
    annotator_ids = np.fromiter((r[2] for r in rows), dtype=np.int64, count=n)
    modes = np.array([r[3] for r in rows])
    human = np.full(n, UNDEFINED, dtype=np.int64)

    binary = modes == Project.Mode.BINARY
    choices = np.array([UNDEFINED if r[4] is None else r[4] for r in rows], dtype=np.int64)
    human[binary] = choices[binary]

    likert = modes == Project.Mode.LIKERT
    if likert.any():
        values = np.array([0 if r[5] is None else r[5] for r in rows], dtype=np.int64)
        readable = likert & (values > 0)
        human[readable] = likert_preference(values[readable], project.likert_points)

    ifs = modes == Project.Mode.IFS
    if ifs.any():
        human[ifs] = _ifs_preferences(
            project=project,
            annotation_ids=annotation_ids[ifs],
            n_responses=np.array([len(r[6] or ()) for r in rows], dtype=np.int64)[ifs],
        )

    shown = np.fromiter((bool(r[7]) for r in rows), dtype=bool, count=n)
    accepted = np.fromiter((bool(r[8]) for r in rows), dtype=bool, count=n)
    return _with_design(
        project=project,
        suggestions=suggestions,
        annotation_ids=annotation_ids,
        item_ids=item_ids,
        annotator_ids=annotator_ids,
        human=human,
        shown=shown,
        accepted=accepted,
        annotation_sources=[str(r[9]) for r in rows],
    )


def _with_design(
    *,
    project: Project,
    suggestions: dict[int, int | None],
    annotation_ids: np.ndarray,
    item_ids: np.ndarray,
    annotator_ids: np.ndarray,
    human: np.ndarray,
    shown: np.ndarray,
    accepted: np.ndarray,
    annotation_sources: list[str],
) -> Comparisons:
    """The comparisons with the blind-sample design and each blind row's source; an annotation saved after an
    exposure adds a blind row from its unaided revision (suggestions.blind_sources)."""
    unaided = blind_sources.unaided_revisions(project=project, annotation_ids=annotation_ids[shown].tolist())
    extra = np.array([i for i, a in enumerate(annotation_ids) if shown[i] and int(a) in unaided], dtype=np.int64)
    rows = np.concatenate([np.arange(annotation_ids.size), extra])
    human = np.concatenate([human, np.array([unaided[int(annotation_ids[i])] for i in extra], dtype=np.int64)])
    shown = np.concatenate([shown, np.zeros(extra.size, dtype=bool)])
    accepted = np.concatenate([accepted, np.zeros(extra.size, dtype=bool)])
    item_ids, annotator_ids = item_ids[rows], annotator_ids[rows]

    design = {
        item_id: (is_blind, probability)
        for item_id, is_blind, probability in Item.objects.filter(project=project, pk__in=list(suggestions))
        .values_list("pk", "is_blind", "blind_inclusion_probability")
        .order_by()
    }
    sample = np.fromiter((design[int(i)][0] for i in item_ids), dtype=bool, count=item_ids.size)
    # An item drawn before the probability was recorded had the project's rate.
    probability = np.array([design[int(i)][1] or project.blind_rate for i in item_ids], dtype=np.float64)
    probability = np.where(sample, probability, 0.0)
    kinds = blind_sources.answered_request_kinds(project=project, item_ids=list(suggestions))
    source = np.array(
        [
            "shown"
            if shown[k]
            else blind_sources.label_source(
                project=project,
                in_sample=bool(sample[k]),
                request_kind=kinds.get((int(item_ids[k]), int(annotator_ids[k]))),
                annotation_source=annotation_sources[int(rows[k])],
            )
            for k in range(rows.size)
        ],
        dtype=object,
    )
    defined = human != UNDEFINED
    llm = np.fromiter((suggestions[int(i)] for i in item_ids), dtype=np.int64, count=item_ids.size)
    return Comparisons(
        item_ids=item_ids[defined],
        annotator_ids=annotator_ids[defined],
        human=human[defined],
        llm=llm[defined],
        shown=shown[defined],
        accepted=accepted[defined],
        undefined=int((~defined).sum()),
        sample=sample[defined],
        probability=probability[defined],
        source=source[defined],
    )


def gold_matches_load(*, project: Project) -> tuple[np.ndarray, np.ndarray]:
    """(item ids, suggestion == gold) for every item with an ok suggestion and a gold preference (a tie is -1 on
    both sides). One comparison per item: the model's accuracy against the reference answer."""
    rows = list(
        Suggestion.objects.filter(item__project=project, status=Suggestion.Status.OK, item__gold_position__isnull=False)
        .values_list("item_id", "preferred_position", "item__gold_position")
        .order_by("item_id")
    )
    items = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matches = np.fromiter((r[1] == r[2] for r in rows), dtype=bool, count=len(rows))
    return items, matches


def _ifs_preferences(*, project: Project, annotation_ids: np.ndarray, n_responses: np.ndarray) -> np.ndarray:
    """Preferred position per IFS annotation from the criterion-weighted S; UNDEFINED if any value is missing."""
    weights = dict(project.criteria.values_list("id", "weight"))
    values = np.array(
        list(
            JudgmentValue.objects.filter(annotation__project=project, annotation_id__in=annotation_ids.tolist())
            .values_list("annotation_id", "response__position", "criterion_id", "mu", "nu")
            .order_by()
        ),
        dtype=np.float64,
    ).reshape(-1, 5)
    n = annotation_ids.size
    width = max(2, int(n_responses.max(initial=2)), int(values[:, 1].max(initial=0)) + 1)
    row_of = {int(a): i for i, a in enumerate(annotation_ids)}
    rows = np.fromiter((row_of[int(a)] for a in values[:, 0]), dtype=np.int64, count=values.shape[0])
    positions = values[:, 1].astype(np.int64)
    criterion_weight = np.fromiter((weights.get(int(c), 0.0) for c in values[:, 2]), dtype=np.float64)
    scores = np.zeros((n, width))
    cells = np.zeros((n, width))
    np.add.at(scores, (rows, positions), criterion_weight * (values[:, 3] - values[:, 4]) / PERMILLE)
    np.add.at(cells, (rows, positions), 1.0)
    exists = np.arange(width)[None, :] < np.maximum(n_responses, 2)[:, None]
    complete = cells >= len(weights)
    scores = np.where(exists & complete, scores, np.nan)
    # Positions an item does not have are never preferred; a missing value of an existing response is undefined.
    scores = np.where(exists, scores, -np.inf)
    return preferred_response(scores, tolerance=project.tie_tolerance, axis=1)


# ------------------------------------------------------------------------------------------------------------------
# Figures (pure functions of Comparisons)


def blind_agreement_figure(comparisons: Comparisons) -> dict[str, Any]:
    """The design-based blind agreement over the fixed random blind sample (module docstring)."""
    sample = comparisons.in_sample
    assert comparisons.probability is not None
    estimate = design_agreement(
        comparisons.match[sample], comparisons.item_ids[sample], comparisons.probability[sample]
    )
    return {**design_figure(estimate), "design": "random_blind_sample"}


def blind_sources_figure(
    comparisons: Comparisons, requests: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Per source of unexposed labels (suggestions.blind_sources): labels ``n``, ``items``, how it enters blind
    agreement (``use``), and for label-request draws their own Hájek ``estimate`` (suggestions.certification)."""
    blind = ~comparisons.shown
    assert comparisons.source is not None
    out: dict[str, dict[str, Any]] = {}
    for source in blind_sources.SOURCES:
        rows = blind & (comparisons.source == source)
        entry: dict[str, Any] = {
            "n": int(rows.sum()),
            "items": int(np.unique(comparisons.item_ids[rows]).size),
            "in_blind_agreement": source == blind_sources.RANDOM_SAMPLE,
            "use": blind_sources.USE[source],
        }
        if requests and source in requests:
            entry["estimate"] = requests[source]
        out[source] = entry
    return out


def anchoring_gap_figure(comparisons: Comparisons) -> dict[str, Any]:
    """Shown − blind agreement with its interval over items (aggregation.maths.comparisons.anchoring_gap), the
    blind side from the random blind sample alone; ``needed`` says how many more comparisons each side needs."""
    shown, match, sample = comparisons.shown, comparisons.match, comparisons.in_sample
    gap = anchoring_gap(
        match[shown],
        comparisons.item_ids[shown],
        match[sample],
        comparisons.item_ids[sample],
        minimum=GAP_MINIMUM_PER_SIDE,
    )
    result = gap.as_dict()
    result["needed"] = {"blind": gap.more_needed["blind"], "shown": gap.more_needed["shown"]}
    result["reason"] = gap.hint
    return result


def human_human_figure(comparisons: Comparisons, side: np.ndarray) -> dict[str, Any]:
    """Pairwise agreement of annotators' preferred responses on the same items, on one side (blind or shown), with
    its interval over items; ``n`` counts pairs, and fewer than 5 pairs withhold it."""
    if not side.any():
        return figure(agreement.Estimate(value=None, n=0))
    items, item_index = np.unique(comparisons.item_ids[side], return_inverse=True)
    annotators, annotator_index = np.unique(comparisons.annotator_ids[side], return_inverse=True)
    labels = np.full((items.size, annotators.size), np.nan)
    labels[item_index, annotator_index] = comparisons.human[side]
    return figure(agreement.pairwise_agreement(labels, ~np.isnan(labels), with_ties=True, interval=True))


def per_annotator_figures(comparisons: Comparisons) -> dict[str, dict[str, Any]]:
    """Each annotator's agreement with the model on their labels of the random blind sample."""
    blind = comparisons.in_sample
    annotators, index = np.unique(comparisons.annotator_ids[blind], return_inverse=True)
    n = np.bincount(index, minlength=annotators.size)
    k = np.bincount(index, weights=comparisons.match[blind].astype(float), minlength=annotators.size)
    return {
        str(int(a)): {"blind_agreement": float(k[i] / n[i]), "blind_n": int(n[i])} for i, a in enumerate(annotators)
    }


def suggestion_figures_compute(
    comparisons: Comparisons,
    *,
    gold: tuple[np.ndarray, np.ndarray] | None = None,
    requests: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every suggestion figure except the handoff evaluation (which handoff_evaluate adds).

    ``gold`` is (item ids, suggestion == gold) from :func:`gold_matches_load`; ``gold.agreement`` is the model's
    accuracy against gold on those items (withheld, like every figure, below 5 comparisons). ``requests`` are the
    label-request draws' own estimates (suggestions.evidence.request_estimates) for the sources split.
    """
    match, shown = comparisons.match, comparisons.shown
    blind = ~shown
    n_shown = int(shown.sum())
    accepted = int(comparisons.accepted.sum())
    items = comparisons.item_ids
    gold_items, gold_match = gold if gold is not None else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
    return {
        "blind": {"agreement": blind_agreement_figure(comparisons)},
        "unaided": {"agreement": figure(agreement_estimate(match[blind], items[blind]))},
        "blind_sources": blind_sources_figure(comparisons, requests),
        "shown": {"agreement": figure(agreement_estimate(match[shown], items[shown]))},
        "gold": {"agreement": figure(agreement_estimate(gold_match, gold_items))},
        "anchoring_gap": anchoring_gap_figure(comparisons),
        "accept": {"count": accepted, "rate": accepted / n_shown if n_shown else None},
        "human_human": {
            "blind": human_human_figure(comparisons, blind),
            "shown": human_human_figure(comparisons, shown),
        },
        "per_annotator": per_annotator_figures(comparisons),
        "comparisons": {"total": len(comparisons), "unreadable": comparisons.undefined},
    }


# ------------------------------------------------------------------------------------------------------------------
# The writer


@transaction.atomic
def suggestion_figures_recompute(*, project_id: int) -> dict[str, Any]:
    """Recompute and store ProjectAggregate.suggestions (keeping the last handoff evaluation) and the blind
    agreement of each AnnotatorAggregate row. Idempotent; called by the debounced project task."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return {}
    figures = suggestion_figures_compute(
        comparisons_load(project=project),
        gold=gold_matches_load(project=project),
        requests=request_estimates(project=project),
    )
    figures["counts"] = Item.objects.filter(project=project).aggregate(
        items=Count("id"),
        ok=Count("id", filter=Q(suggestion__status=Suggestion.Status.OK)),
        failed=Count("id", filter=Q(suggestion__status=Suggestion.Status.FAILED)),
    )
    aggregate, _ = ProjectAggregate.objects.get_or_create(project=project)
    aggregate = ProjectAggregate.objects.select_for_update().get(pk=aggregate.pk)
    if "handoff" in (aggregate.suggestions or {}):
        figures["handoff"] = aggregate.suggestions["handoff"]
    aggregate.suggestions = figures
    aggregate.suggestions_computed_at = timezone.now()
    aggregate.suggestions_settings_version = project.settings_version
    aggregate.save(update_fields=["suggestions", "suggestions_computed_at", "suggestions_settings_version"])

    per_annotator = figures["per_annotator"]
    # Locked in annotator order, the order annotator_aggregates_recompute upserts them in: the UPDATE below would
    # lock them in table order, and two runs taking the same rows in different orders deadlock.
    annotator_rows = AnnotatorAggregate.objects.filter(project=project).order_by("annotator_id")
    rows = list(annotator_rows.select_for_update().only("id", "annotator_id"))
    for row in rows:
        mine = per_annotator.get(str(row.annotator_id))
        row.blind_agreement = mine["blind_agreement"] if mine else None
        row.blind_n = mine["blind_n"] if mine else 0
    if rows:
        AnnotatorAggregate.objects.bulk_update(rows, ["blind_agreement", "blind_n"])
    return figures
