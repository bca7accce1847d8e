"""Exports as JSON Lines, streamed with constant memory: shared by the API and ``manage.py export_project``.

Every generator walks the project in keyset pages of ``chunk_size`` items (``item_id > last``), fetching each page's
responses and aggregates in a handful of bulk queries, and yields one encoded line at a time. Memory therefore depends
on the page size, never on the project size.

Formats (one JSON object a line):
- ``dpo``: TRL's ``prompt``, ``chosen``, ``rejected`` (in TRL's conversational shape, the prompt as messages and
  each answer as one assistant message, when the item is a conversation) plus ``p_chosen``, ``margin``,
  ``hesitation``, ``agreement``, ``n_annotators``, ``provenance``, ``tie`` and ``id``. Items with more than two
  responses give all pairs or only best against worst (``pairs``).
- ``soft``: every unordered pair of responses (position order) with the soft label p(a ≻ b) = 0.5 + (S_a − S_b)/4.
- ``ifs``: one line per item with the aggregated (μ, ν, π, S) of every response per operator and criterion
  (criterion ``overall`` is the criterion-weighted combination).
- ``rankings``: one line per ranked label (aggregation.exports.rankings): the responses best first and every pair
  that order implies.
- ``kto``: TRL's unpaired ``prompt``, ``completion``, ``label`` from per-response judgments (aggregation.exports.kto).
- ``annotations``: one line per raw label: values, binary choice or Likert value, blind/shown flags, the suggestion
  exposures of that annotator for that item, the response order they saw and the time spent.

Binary and Likert items have no IFS values: their scores are the pseudo-scores S₀ = s̄, S₁ = −s̄ of the mean signed
preference (see aggregation.services), so p and margin read the same in every mode; their hesitation is null.

Ties. A pair is a tie when its scores differ by less than the project's tie tolerance, and, for binary and Likert
items, when the unweighted votes split evenly (``vote_tie``: weights alone would otherwise pick a winner). ``ties``
says what to do with them: ``exclude`` leaves them out (the default for ``dpo``, whose rows claim that one response
is better), ``mark`` keeps them with ``"tie": true`` (the default for ``soft`` and ``ifs``, whose p ≈ 0.5 already
says "no preference"). ``min_margin`` filters on the margin whatever ``ties`` says.

Only items with an ItemAggregate appear in ``dpo``, ``soft`` and ``ifs``: an item nobody labelled (and not handed
off) has nothing to export. Access is checked by the caller (the API lets only leads in; the command is an operator's).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import QuerySet
from django.db.models.functions import Coalesce

from aggregation.exports.kto import kto_lines

# The options and their check live in aggregation.exports.options.
from aggregation.exports.options import DEFAULT_CHUNK_SIZE, OVERALL, check_export_options
from aggregation.exports.options import ExportOptions as ExportOptions
from aggregation.exports.rankings import ranking_lines
from aggregation.maths.ifs import TOLERANCE_SLACK
from aggregation.models import ItemAggregate, ResponseAggregate
from annotation.models import Annotation, JudgmentValue, SuggestionExposure
from projects import conversation
from projects.models import TIE, Criterion, Item, Project, Response

# One encoder for every line: json.dumps with options builds a new encoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _line(row: dict[str, Any]) -> str:
    return _ENCODER.encode(row) + "\n"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _among(rows: QuerySet[Any], column: str, ids: list[int]) -> QuerySet[Any]:
    """``column IN ids`` for a page of ids. On PostgreSQL as ``= ANY(array)``: one parameter instead of thousands,
    which Django and the driver would otherwise process one by one on every page (a third of the export's time)."""
    if connection.vendor != "postgresql":
        return rows.filter(**{f"{column}__in": ids})
    table = connection.ops.quote_name(rows.model._meta.db_table)
    return rows.extra(where=[f"{table}.{connection.ops.quote_name(column)} = ANY(%s)"], params=[ids])


def _aggregate_rows(project: Project, options: ExportOptions) -> QuerySet[ItemAggregate]:
    rows = ItemAggregate.objects.filter(project=project)
    if options.min_annotators is not None:
        rows = rows.filter(n_annotators__gte=options.min_annotators)
    if options.max_hesitation is not None:
        # Binary and Likert items have no hesitation (null), so this filter leaves them out.
        rows = rows.filter(hesitation__lte=options.max_hesitation)
    if options.min_agreement is not None:
        rows = rows.filter(agreement__gte=options.min_agreement)
    if options.provenance is not None:
        rows = rows.filter(provenance=options.provenance)
    return rows


_AGGREGATE_FIELDS = (
    "item_id",
    "provenance",
    "best_position",
    "worst_position",
    "p_best",
    "margin",
    "hesitation",
    "agreement",
    "n_annotators",
    "signed_preference",
    "vote_tie",
)


class _Aggregate(NamedTuple):
    item_id: int
    external_id: str
    prompt: str | list[dict[str, str]]  # the messages when the item is a conversation (TRL's conversational shape)
    provenance: str
    best: int | None
    worst: int | None
    p_best: float | None
    margin: float | None
    hesitation: float | None
    agreement: float | None
    n_annotators: int
    signed_preference: float | None
    vote_tie: bool


def _aggregate_pages(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[list[_Aggregate]]:
    """Keyset pages of item aggregates with their item's texts, ordered by item id.

    The item's texts come in a second query by primary key: joined into the keyset query, the planner may walk the
    items from the start of the table for every page, which makes the whole export quadratic.
    """
    rows = _aggregate_rows(project, options).order_by("item_id").values_list(*_AGGREGATE_FIELDS)
    last = 0
    while True:
        page = list(rows.filter(item_id__gt=last)[:chunk_size])
        if not page:
            return
        texts = {
            item_id: (external_id, prompt if messages is None else conversation.trl_messages(messages))
            for item_id, external_id, prompt, messages in _among(
                Item.objects.all(), "id", [row[0] for row in page]
            ).values_list("id", "external_id", "prompt", "prompt_messages")
        }
        yield [_Aggregate(row[0], *texts[row[0]], *row[1:]) for row in page]
        last = page[-1][0]


@dataclass(slots=True)
class _ResponseScore:
    position: int
    text: str
    model: str
    # Set together from the overall aggregate; None when the response has none.
    score: float | None = None
    hesitation: float | None = None


def _responses_for(page: list[_Aggregate], operator: str) -> dict[int, dict[int, _ResponseScore]]:
    """Per item, per stored position: text, model and the score S of the overall aggregate under ``operator``.

    Items without response aggregates (binary, Likert) get the pseudo-scores S₀ = s̄, S₁ = −s̄ when they have two
    responses, with no hesitation.
    """
    item_ids = [row.item_id for row in page]
    by_item: dict[int, dict[int, _ResponseScore]] = defaultdict(dict)
    by_id: dict[int, _ResponseScore] = {}
    texts = _among(Response.objects.all(), "item_id", item_ids).values_list(
        "id", "item_id", "position", "text", "model_name"
    )
    for response_id, item_id, position, text, model in texts:
        response = _ResponseScore(position=position, text=text, model=model)
        by_item[item_id][position] = response
        by_id[response_id] = response
    overall = ResponseAggregate.objects.filter(operator=operator, criterion__isnull=True)
    for response_id, mu, nu in _among(overall, "item_id", item_ids).values_list("response_id", "mu", "nu"):
        scored = by_id.get(response_id)
        if scored is not None:
            scored.score, scored.hesitation = mu - nu, 1.0 - mu - nu
    for row in page:
        responses = by_item.get(row.item_id, {})
        if row.signed_preference is None or sorted(responses) != [0, 1]:
            continue
        if all(r.score is None for r in responses.values()):
            responses[0].score, responses[1].score = row.signed_preference, -row.signed_preference
    return by_item


@dataclass(frozen=True)
class _Pair:
    chosen: _ResponseScore
    rejected: _ResponseScore
    p_chosen: float
    margin: float
    hesitation: float | None


def _scored_pair(a: _ResponseScore, b: _ResponseScore) -> _Pair | None:
    if a.score is None or b.score is None:
        return None
    chosen, rejected = (a, b) if a.score >= b.score else (b, a)
    margin = chosen.score - rejected.score  # type: ignore[operator]
    hesitation = None
    if chosen.hesitation is not None and rejected.hesitation is not None:
        hesitation = (chosen.hesitation + rejected.hesitation) / 2
    return _Pair(chosen=chosen, rejected=rejected, p_chosen=0.5 + margin / 4, margin=margin, hesitation=hesitation)


def _within_tolerance(margin: float, tolerance: float) -> bool:
    """|ΔS| below the project's tie tolerance (as aggregation.maths.ifs.preferred_response reads it)."""
    return abs(margin) <= 0.0 or abs(margin) < tolerance - TOLERANCE_SLACK


def _dpo_pairs(responses: dict[int, _ResponseScore], row: _Aggregate, pairs: str) -> Iterator[tuple[str, _Pair]]:
    """(suffix for the id, pair) for one item. Falls back on the item aggregate when responses have no scores."""
    scored = [r for r in responses.values() if r.score is not None]
    if len(scored) >= 2:
        if pairs == "all":
            for a, b in combinations(sorted(scored, key=lambda r: r.position), 2):
                pair = _scored_pair(a, b)
                if pair is not None:
                    yield f"{a.position}-{b.position}", pair
            return
        ranked = sorted(scored, key=lambda r: (r.score, -r.position), reverse=True)
        pair = _scored_pair(ranked[0], ranked[-1])
        if pair is not None:
            yield "", pair
        return
    # Binary items with more than two responses carry only the item-level figures (best and worst).
    best, worst, margin = row.best, row.worst, row.margin
    if best is None or worst is None or best < 0 or worst < 0 or best == worst or margin is None:
        return
    if best in responses and worst in responses:
        yield (
            "",
            _Pair(
                chosen=responses[best],
                rejected=responses[worst],
                p_chosen=row.p_best if row.p_best is not None else 0.5 + abs(margin) / 4,
                margin=abs(margin),
                hesitation=row.hesitation,
            ),
        )


def _answer(row: _Aggregate, text: str) -> str | list[dict[str, str]]:
    """A response as TRL reads it: a text, or one assistant message when the prompt is a conversation."""
    return text if isinstance(row.prompt, str) else conversation.assistant_turn(text)


def _dpo_lines(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    for page in _aggregate_pages(project, options, chunk_size):
        responses = _responses_for(page, project.aggregation_operator)
        for row in page:
            lines = []
            for suffix, pair in _dpo_pairs(responses.get(row.item_id, {}), row, options.pairs):
                tie = row.vote_tie or _within_tolerance(pair.margin, project.tie_tolerance)
                if (tie and options.ties_excluded) or (
                    options.min_margin is not None and pair.margin < options.min_margin
                ):
                    continue
                lines.append(
                    _line(
                        {
                            "prompt": row.prompt,
                            "chosen": _answer(row, pair.chosen.text),
                            "rejected": _answer(row, pair.rejected.text),
                            "p_chosen": _rounded(pair.p_chosen),
                            "margin": _rounded(pair.margin),
                            "hesitation": _rounded(pair.hesitation),
                            "agreement": _rounded(row.agreement),
                            "n_annotators": row.n_annotators,
                            "provenance": row.provenance,
                            "tie": tie,
                            "id": f"{row.external_id}#{suffix}" if suffix else row.external_id,
                            "chosen_position": pair.chosen.position,
                            "rejected_position": pair.rejected.position,
                        }
                    )
                )
            yield row.item_id, lines


def _soft_pairs(
    responses: dict[int, _ResponseScore], row: _Aggregate
) -> Iterator[tuple[_ResponseScore, _ResponseScore, float, float | None]]:
    """(a, b, S_a − S_b, hesitation) for every scored pair in position order; the best-worst pair from the item
    figures when the responses have no scores (binary items with more than two responses)."""
    ordered = sorted(responses.values(), key=lambda r: r.position)
    if sum(r.score is not None for r in ordered) >= 2:
        for a, b in combinations(ordered, 2):
            if a.score is None or b.score is None:
                continue
            hesitation = None
            if a.hesitation is not None and b.hesitation is not None:
                hesitation = (a.hesitation + b.hesitation) / 2
            yield a, b, a.score - b.score, hesitation
        return
    for _, pair in _dpo_pairs(responses, row, "best_worst"):
        a, b = sorted((pair.chosen, pair.rejected), key=lambda r: r.position)
        yield a, b, pair.margin if a is pair.chosen else -pair.margin, pair.hesitation


def _soft_lines(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    for page in _aggregate_pages(project, options, chunk_size):
        responses = _responses_for(page, project.aggregation_operator)
        for row in page:
            lines = []
            for a, b, margin, hesitation in _soft_pairs(responses.get(row.item_id, {}), row):
                tie = row.vote_tie or _within_tolerance(margin, project.tie_tolerance)
                if (tie and options.ties_excluded) or (
                    options.min_margin is not None and abs(margin) < options.min_margin
                ):
                    continue
                lines.append(
                    _line(
                        {
                            "id": f"{row.external_id}#{a.position}-{b.position}",
                            "prompt": row.prompt,
                            "response_a": a.text,
                            "response_b": b.text,
                            "position_a": a.position,
                            "position_b": b.position,
                            "p_a_over_b": _rounded(0.5 + margin / 4),
                            "margin": _rounded(margin),
                            "hesitation": _rounded(hesitation),
                            "agreement": _rounded(row.agreement),
                            "n_annotators": row.n_annotators,
                            "provenance": row.provenance,
                            "tie": tie,
                        }
                    )
                )
            yield row.item_id, lines


def _ifs_lines(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    criterion_names = dict(Criterion.objects.filter(project=project).values_list("id", "name"))
    for page in _aggregate_pages(project, options, chunk_size):
        item_ids = [row.item_id for row in page]
        responses: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
        position_of: dict[int, tuple[int, int]] = {}
        texts = _among(Response.objects.all(), "item_id", item_ids).values_list(
            "id", "item_id", "position", "text", "model_name"
        )
        for response_id, item_id, position, text, model in texts:
            responses[item_id][position] = {"position": position, "text": text, "model": model, "aggregates": {}}
            position_of[response_id] = (item_id, position)
        aggregates = _among(ResponseAggregate.objects.all(), "item_id", item_ids).values_list(
            "response_id", "criterion_id", "operator", "mu", "nu"
        )
        for response_id, criterion_id, operator, mu, nu in aggregates:
            item_id, position = position_of[response_id]
            criterion = OVERALL if criterion_id is None else criterion_names.get(criterion_id, str(criterion_id))
            responses[item_id][position]["aggregates"].setdefault(operator, {})[criterion] = {
                "mu": _rounded(mu),
                "nu": _rounded(nu),
                "pi": _rounded(1.0 - mu - nu),
                "score": _rounded(mu - nu),
            }
        for row in page:
            margin = row.margin
            tie = row.vote_tie or row.best == TIE
            if (tie and options.ties_excluded) or (
                options.min_margin is not None and (margin is None or abs(margin) < options.min_margin)
            ):
                yield row.item_id, []
                continue
            line = {
                "id": row.external_id,
                "prompt": row.prompt,
                "provenance": row.provenance,
                "operator": project.aggregation_operator,
                "best_position": row.best,
                "worst_position": row.worst,
                "p_best": _rounded(row.p_best),
                "margin": _rounded(margin),
                "hesitation": _rounded(row.hesitation),
                "agreement": _rounded(row.agreement),
                "signed_preference": _rounded(row.signed_preference),
                "tie": tie,
                "n_annotators": row.n_annotators,
                "responses": [responses[row.item_id][p] for p in sorted(responses.get(row.item_id, {}))],
            }
            yield row.item_id, [_line(line)]


def _annotation_lines(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    """Raw labels, keyset-paged by annotation id; the filters that concern aggregates do not apply to raw labels."""
    criterion_names = dict(Criterion.objects.filter(project=project).values_list("id", "name"))
    rows = (
        Annotation.objects.filter(project=project)
        # An imported annotator goes by the name its file gave it, not its shadow account's username.
        .annotate(annotator_name=Coalesce("annotator__imported_identity__external_id", "annotator__username"))
        .order_by("id")
        .values_list(
            "id",
            "item_id",
            "item__external_id",
            "item__is_blind",
            "annotator_id",
            "annotator_name",
            "mode",
            "response_order",
            "binary_choice",
            "likert_value",
            "suggestion_shown",
            "accepted_suggestion",
            "time_spent_ms",
            "revision_count",
            "source",
            "created_at",
            "updated_at",
            "ranking",
            "both_bad",
        )
    )
    last = 0
    while True:
        page = list(rows.filter(id__gt=last)[:chunk_size])
        if not page:
            return
        last = page[-1][0]
        annotation_ids = [row[0] for row in page]
        item_ids = {row[1] for row in page}
        values: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for annotation_id, position, criterion_id, mu, nu in (
            _among(JudgmentValue.objects.all(), "annotation_id", annotation_ids)
            .order_by("annotation_id", "response__position", "criterion_id")
            .values_list("annotation_id", "response__position", "criterion_id", "mu", "nu")
        ):
            values[annotation_id].append(
                {
                    "position": position,
                    "criterion": criterion_names.get(criterion_id, str(criterion_id)),
                    "mu": mu / 1000,
                    "nu": nu / 1000,
                }
            )
        exposures: dict[tuple[int, int], list[dict[str, str]]] = defaultdict(list)
        for item_id, annotator_id, kind, created_at in (
            _among(SuggestionExposure.objects.filter(project=project), "item_id", list(item_ids))
            .order_by("created_at", "id")
            .values_list("item_id", "annotator_id", "kind", "created_at")
        ):
            exposures[(item_id, annotator_id)].append({"kind": kind, "at": created_at.isoformat()})
        for (
            annotation_id,
            item_id,
            external_id,
            item_is_blind,
            annotator_id,
            username,
            mode,
            response_order,
            binary_choice,
            likert_value,
            suggestion_shown,
            accepted,
            time_spent_ms,
            revision_count,
            source,
            created_at,
            updated_at,
            ranking,
            both_bad,
        ) in page:
            row = {
                "item": external_id,
                "annotator": username,
                "mode": mode,
                "response_order": response_order,
                "choice": binary_choice,
                "ranking": ranking,
                "both_bad": both_bad,
                "likert": likert_value,
                "values": values.get(annotation_id, []),
                "blind": not suggestion_shown,
                "suggestion_shown": suggestion_shown,
                "accepted_suggestion": accepted,
                "item_in_blind_sample": item_is_blind,
                "exposures": exposures.get((item_id, annotator_id), []),
                "time_spent_ms": time_spent_ms,
                "revision_count": revision_count,
                "source": source,
                "timestamp": created_at.isoformat(),
                "updated_at": updated_at.isoformat(),
            }
            yield item_id, [_line(row)]


_GENERATORS: dict[str, Callable[[Project, ExportOptions, int], Iterator[tuple[int, list[str]]]]] = {
    "dpo": _dpo_lines,
    "soft": _soft_lines,
    "ifs": _ifs_lines,
    "annotations": _annotation_lines,
    "rankings": lambda project, options, chunk_size: ranking_lines(project, chunk_size),
    "kto": lambda project, options, chunk_size: kto_lines(project, _aggregate_rows(project, options), chunk_size),
}


def export_count(*, project: Project, options: ExportOptions) -> int:
    """How many units the progress bar counts: annotations for ``annotations``, aggregated items otherwise."""
    if options.format == "annotations":
        return Annotation.objects.filter(project=project).count()
    if options.format == "rankings":
        return Annotation.objects.filter(project=project, ranking__isnull=False).count()
    return _aggregate_rows(project, options).count()


def export_lines(
    *,
    project: Project,
    options: ExportOptions,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    on_unit: Callable[[], None] | None = None,
) -> Iterator[str]:
    """JSON Lines for ``options.format``, one line at a time; ``on_unit`` is called once per item or label read."""
    check_export_options(options)
    for _unit, lines in _GENERATORS[options.format](project, options, chunk_size):
        yield from lines
        if on_unit is not None:
            on_unit()


def export_filename(*, project: Project, options: ExportOptions) -> str:
    return f"{project.slug}-{options.format}.jsonl"
