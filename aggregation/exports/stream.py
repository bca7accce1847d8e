"""Exports as JSON Lines, streamed with constant memory: shared by the API and ``manage.py export_project``.

Every generator walks the project in keyset pages of ``chunk_size`` items (``item_id > last``), fetching each page's
responses and aggregates in a handful of bulk queries, and yields one encoded line at a time. Memory therefore depends
on the page size, never on the project size.

Formats (one JSON object a line; the columns and their types are aggregation.exports.schema.FEATURES, the same in
every mode, declared in the dataset card so that ``datasets`` reads them):
- ``dpo``: TRL's ``prompt``, ``chosen``, ``rejected`` (in TRL's conversational shape when the project holds
  conversations: every prompt as messages, each answer as one assistant message) plus ``chosen_model``,
  ``rejected_model``, ``p_chosen``,
  ``consensus_margin``, ``hesitation``, ``agreement``, ``n_annotators``, ``provenance``, ``tie``, ``id`` and the
  stored positions. Items with more than two responses give all pairs or only best against worst (``pairs``).
  ``consensus_margin`` is S_chosen − S_rejected in [0, 2], how firmly the annotators agree (p_chosen = 0.5 +
  consensus_margin / 4); it is not named ``margin`` because TRL's RewardTrainer adds a ``margin`` column to its loss.
- ``soft``: every unordered pair of responses (position order) with their texts and models and the soft label
  p(a ≻ b) = 0.5 + (S_a − S_b)/4; ``consensus_margin`` is S_a − S_b in [−2, 2].
- ``ifs``: one line per item with the aggregated (μ, ν, π, S) of every response as records per operator and
  criterion (criterion ``overall`` is the criterion-weighted combination).
- ``rankings`` (aggregation.exports.rankings): one line per ranked label, the responses best first and every pair
  that order implies.
- ``kto`` (aggregation.exports.kto): TRL's unpaired ``prompt``, ``completion``, ``label`` from per-response judgments.
- ``annotations`` (aggregation.exports.annotations): one line per raw label.
- ``metadata`` (dpo, soft, ifs): the item metadata keys the lead chose, as string columns ``metadata_<key>``.

Binary and Likert items have no IFS values: their scores are the pseudo-scores S₀ = s̄, S₁ = −s̄ of the mean signed
preference (see aggregation.services), so p and the consensus margin read the same in every mode; their hesitation
is null (a nullable float).

Ties. A pair is a tie when its scores differ by less than the project's tie tolerance, and, for binary and Likert
items, when the unweighted votes split evenly (``vote_tie``: weights alone would otherwise pick a winner). ``ties``
says what to do with them: ``exclude`` leaves them out (the default for ``dpo``, whose rows claim that one response
is better), ``mark`` keeps them with ``"tie": true`` (the default for ``soft`` and ``ifs``, whose p ≈ 0.5 already
says "no preference"). ``min_margin`` filters on the consensus margin whatever ``ties`` says.

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

from django.db.models import QuerySet

from aggregation.exports.annotations import annotation_lines
from aggregation.exports.encoding import among as _among
from aggregation.exports.encoding import line as _line
from aggregation.exports.encoding import rounded as _rounded
from aggregation.exports.kto import kto_lines

# The options and their check live in aggregation.exports.options.
from aggregation.exports.options import DEFAULT_CHUNK_SIZE, OVERALL, check_export_options
from aggregation.exports.options import ExportOptions as ExportOptions
from aggregation.exports.rankings import ranking_lines
from aggregation.exports.schema import METADATA_PREFIX
from aggregation.maths.ifs import TOLERANCE_SLACK
from aggregation.models import ItemAggregate, ResponseAggregate
from annotation.models import Annotation
from projects import conversation
from projects.models import TIE, Criterion, Item, Project, Response


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
    prompt: str | list[dict[str, str]]  # messages when the project holds conversations (TRL's conversational shape)
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
    metadata: dict[str, str | None]


def _metadata_columns(keys: tuple[str, ...], metadata: Any, lead_metadata: Any) -> dict[str, str | None]:
    """The chosen keys as strings (JSON for anything but a string), from the item's metadata, else its lead-only
    metadata; null when the item has neither. Strings whatever the value, so the column's type never varies."""
    columns: dict[str, str | None] = {}
    for key in keys:
        for source in (metadata, lead_metadata):
            if isinstance(source, dict) and key in source and source[key] is not None:
                value = source[key]
                columns[f"{METADATA_PREFIX}{key}"] = value if isinstance(value, str) else json.dumps(value)
                break
        else:
            columns[f"{METADATA_PREFIX}{key}"] = None
    return columns


def project_has_conversations(project: Project) -> bool:
    """Whether any item's prompt is a conversation: then every prompt is exported as messages."""
    return Item.objects.filter(project=project, prompt_messages__isnull=False).exists()


def _aggregate_pages(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[list[_Aggregate]]:
    """Keyset pages of item aggregates with their item's texts, ordered by item id.

    The item's texts come in a second query by primary key: joined into the keyset query, the planner may walk the
    items from the start of the table for every page, which makes the whole export quadratic.
    """
    rows = _aggregate_rows(project, options).order_by("item_id").values_list(*_AGGREGATE_FIELDS)
    conversational = project_has_conversations(project)
    last = 0
    while True:
        page = list(rows.filter(item_id__gt=last)[:chunk_size])
        if not page:
            return
        fields: tuple[str, ...] = ("id", "external_id", "prompt", "prompt_messages")
        fields += ("metadata", "lead_metadata") if options.metadata else ()
        texts = {
            found[0]: (
                found[1],
                conversation.export_prompt(found[2], found[3], conversational=conversational),
                _metadata_columns(options.metadata, *found[4:]) if options.metadata else {},
            )
            for found in _among(Item.objects.all(), "id", [row[0] for row in page]).values_list(*fields)
        }
        yield [_Aggregate._make((row[0], *texts[row[0]][:2], *row[1:], texts[row[0]][2])) for row in page]
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
                            "chosen_model": pair.chosen.model,
                            "rejected_model": pair.rejected.model,
                            "p_chosen": _rounded(pair.p_chosen),
                            "consensus_margin": _rounded(pair.margin),
                            "hesitation": _rounded(pair.hesitation),
                            "agreement": _rounded(row.agreement),
                            "n_annotators": row.n_annotators,
                            "provenance": row.provenance,
                            "tie": tie,
                            "id": f"{row.external_id}#{suffix}" if suffix else row.external_id,
                            "chosen_position": pair.chosen.position,
                            "rejected_position": pair.rejected.position,
                            **row.metadata,
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
                            "model_a": a.model,
                            "model_b": b.model,
                            "position_a": a.position,
                            "position_b": b.position,
                            "p_a_over_b": _rounded(0.5 + margin / 4),
                            "consensus_margin": _rounded(margin),
                            "hesitation": _rounded(hesitation),
                            "agreement": _rounded(row.agreement),
                            "n_annotators": row.n_annotators,
                            "provenance": row.provenance,
                            "tie": tie,
                            **row.metadata,
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
            responses[item_id][position] = {"position": position, "text": text, "model": model, "aggregates": []}
            position_of[response_id] = (item_id, position)
        aggregates = (
            _among(ResponseAggregate.objects.all(), "item_id", item_ids)
            .order_by("response_id", "operator", "criterion_id")
            .values_list("response_id", "criterion_id", "operator", "mu", "nu")
        )
        for response_id, criterion_id, operator, mu, nu in aggregates:
            item_id, position = position_of[response_id]
            criterion = OVERALL if criterion_id is None else criterion_names.get(criterion_id, str(criterion_id))
            responses[item_id][position]["aggregates"].append(
                {
                    "operator": operator,
                    "criterion": criterion,
                    "mu": _rounded(mu),
                    "nu": _rounded(nu),
                    "pi": _rounded(1.0 - mu - nu),
                    "score": _rounded(mu - nu),
                }
            )
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
                "consensus_margin": _rounded(margin),
                "hesitation": _rounded(row.hesitation),
                "agreement": _rounded(row.agreement),
                "signed_preference": _rounded(row.signed_preference),
                "tie": tie,
                "n_annotators": row.n_annotators,
                "responses": [responses[row.item_id][p] for p in sorted(responses.get(row.item_id, {}))],
                **row.metadata,
            }
            yield row.item_id, [_line(line)]


_GENERATORS: dict[str, Callable[[Project, ExportOptions, int], Iterator[tuple[int, list[str]]]]] = {
    "dpo": _dpo_lines,
    "soft": _soft_lines,
    "ifs": _ifs_lines,
    "annotations": annotation_lines,
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
