"""Reads for the annotation page: everything its frame shows for one item, and the assignment it is shown under.

Takes a project the caller reached through projects.selectors (membership checked); only the calling annotator's
own rows are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists
from django.utils import timezone
from django.utils.translation import gettext

from annotation import judgment
from annotation.checks import RANKING_MIN, SKIP_REASONS
from annotation.claims import assignment_drawn
from annotation.ifs_presets import IFS_PRESETS, presets_attribute
from annotation.models import Annotation, Assignment, LabelRequest
from annotation.rendering import markdown_render, prompt_render
from annotation.selectors import (
    PURPOSE_PAGE,
    PURPOSE_RESOLUTION,
    AnyUser,
    annotation_get_own,
    annotation_payload_preferred,
    live_claims_by_others,
    repeat_open_for,
    suggestion_prefilled_values,
    suggestion_visible_for,
)
from projects.models import TIE, Criterion, Item, Project, Response
from projects.selectors import item_responses, project_criteria


@dataclass
class SliderCell:
    criterion: Criterion
    mu: int
    nu: int
    error: str = ""

    @property
    def pi(self) -> int:
        return max(0, 1000 - self.mu - self.nu)

    def step(self, value: int) -> int:
        # Whole percent when the stored value is a whole percent; per-mille otherwise, so a value saved through the
        # API (say 333 ‰) is never silently rounded by the slider.
        return 10 if value % 10 == 0 else 1


@dataclass
class DisplayedResponse:
    label: str
    position: int
    html: str
    cells: list[SliderCell] = field(default_factory=list)
    # Nothing to read (imported data has responses that are empty or only whitespace): the page says so.
    empty: bool = False


@dataclass
class ShownSuggestion:
    preferred_label: str
    rationale: str
    is_tie: bool


def _values_from_annotation(annotation: Annotation | None) -> dict[tuple[int, int], tuple[int, int]]:
    if annotation is None:
        return {}
    return {(v.response_id, v.criterion_id): (v.mu, v.nu) for v in annotation.values.all()}


@dataclass(frozen=True)
class PageFrame:
    """What the annotation page's frame shows, read in a constant number of queries (``annotation_page_context``).

    ``suggestion_object`` is the model object the view records the exposure of; only ``suggestion`` (the shown
    fields) reaches the page. ``context()`` gives the template its variables."""

    project: Project
    item: Item
    annotation: Annotation | None
    assignment: Assignment
    criteria: list[Criterion]
    responses: list[DisplayedResponse]
    choices: PageChoices
    likert_scale: list[dict[str, Any]]
    ranking_rows: list[dict[str, Any]]
    ranking_value: str
    suggestion_object: Any
    suggestion: ShownSuggestion | None
    stage: str
    verifying: bool
    own_label: str
    errors: dict[str, list[str]]

    def context(self) -> dict[str, Any]:
        """The template's variables (without ``suggestion_object``, which stays in the view)."""
        item, project, choices = self.item, self.project, self.choices
        return {
            "project": project,
            "item": item,
            "ifs_presets": IFS_PRESETS,
            "skip_reasons": SKIP_REASONS,
            "ifs_presets_attribute": presets_attribute(),
            "prompt_html": prompt_render(prompt=item.prompt, messages=item.prompt_messages),
            "guidelines_html": markdown_render(project.guidelines) if project.guidelines else "",
            "responses": self.responses,
            "criteria": self.criteria,
            "annotation": self.annotation,
            "assignment": self.assignment,
            "binary_choice": choices.binary_choice,
            "binary_options": choices.binary_options,
            "likert_value": choices.likert_value,
            "likert_scale": self.likert_scale,
            "both_bad": choices.both_bad,
            "ranking_rows": self.ranking_rows,
            "ranking_value": self.ranking_value,
            "suggestion": self.suggestion,
            "stage": self.stage,
            "verifying": self.verifying,
            "own_label": self.own_label,
            "accepted": choices.accepted,
            "errors": self.errors,
            "form_errors": self.errors.get("__all__", []),
            "time_spent_ms": self.annotation.time_spent_ms if self.annotation else 0,
        }


@dataclass(frozen=True)
class PageChoices:
    """The non-slider inputs as the page shows them: stored, re-shown after a refused save, or filled by Accept."""

    binary_choice: int | None
    binary_options: list[tuple[str, int]]
    likert_value: int | None
    both_bad: bool
    accepted: bool


def annotation_page_context(
    *,
    project: Project,
    item: Item,
    annotator: AnyUser,
    assignment: Assignment,
    stage: str = "label",
    posted: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    accept_values: bool = False,
    unlabelled: bool = False,
) -> PageFrame:
    """Everything the annotation page frame needs, in a constant number of queries.

    ``posted`` re-shows what the annotator sent after a refused save (their values, not the stored ones).
    ``stage``: "label" (normal), "resolution" (after-label step). ``accept_values`` fills the form from the
    suggestion (the Accept button); the caller has recorded the exposure.
    """
    errors = errors or {}
    responses = item_responses(item)
    by_position = {response.position: response for response in responses}
    order = [p for p in assignment.response_order if p in by_position]
    criteria = project_criteria(project)
    annotation = None if unlabelled else annotation_get_own(project=project, item=item, annotator=annotator)
    if annotation is not None and repeat_open_for(project=project, item=item, annotator=annotator) is not None:
        # An unannounced repeat: the page is the item as first shown, without the earlier judgment.
        annotation = None
    suggestion = suggestion_visible_for(
        project=project,
        item=item,
        annotator=annotator,
        purpose=PURPOSE_RESOLUTION if stage == "resolution" else PURPOSE_PAGE,
        has_saved=annotation is not None,
        with_values=accept_values,  # only Accept fills the sliders from the suggestion's own values
    )
    labels = {position: judgment.display_label(index) for index, position in enumerate(order)}
    # A verification request shows the model's answer filled in, to keep (save as is) or change.
    verifying = bool(getattr(suggestion, "verifying", False)) and annotation is None and stage == "label"
    prefilled: dict[tuple[int, int], tuple[int, int]] = {}
    if suggestion is not None and (accept_values or verifying):
        prefilled = suggestion_prefilled_values(suggestion=suggestion, responses=responses, criteria=criteria)
    ranking_rows, ranking_value = _ranking_rows(
        project=project, order=order, labels=labels, stored=annotation.ranking if annotation else None, posted=posted
    )
    return PageFrame(
        project=project,
        item=item,
        annotation=annotation,
        assignment=assignment,
        criteria=criteria,
        responses=_displayed_responses(
            order=order,
            by_position=by_position,
            labels=labels,
            criteria=criteria,
            stored=_values_from_annotation(annotation),
            prefilled=prefilled,
            posted=posted,
            errors=errors,
        ),
        choices=_page_choices(
            project=project,
            annotation=annotation,
            suggestion=suggestion if (accept_values or (verifying and posted is None)) else None,
            order=order,
            labels=labels,
            posted=posted,
            accept_values=accept_values,
        ),
        likert_scale=_likert_scale(project=project, order=order, labels=labels),
        ranking_rows=ranking_rows,
        ranking_value=ranking_value,
        suggestion_object=suggestion,
        suggestion=_shown_suggestion(suggestion, labels),
        stage=stage,
        verifying=verifying,
        own_label=_own_label(project=project, annotation=annotation, criteria=criteria, labels=labels, stage=stage),
        errors=errors,
    )


def _displayed_responses(
    *,
    order: list[int],
    by_position: dict[int, Response],
    labels: dict[int, str],
    criteria: list[Criterion],
    stored: dict[tuple[int, int], tuple[int, int]],
    prefilled: dict[tuple[int, int], tuple[int, int]],
    posted: dict[str, Any] | None,
    errors: dict[str, list[str]],
) -> list[DisplayedResponse]:
    """The responses in the annotator's order, each with its slider values: posted after a refused save, else filled
    from the suggestion, else stored, else empty."""
    displayed: list[DisplayedResponse] = []
    for position in order:
        response = by_position[position]
        entry = DisplayedResponse(
            label=labels[position],
            position=position,
            html=markdown_render(response.text),
            empty=not response.text.strip(),
        )
        for criterion in criteria:
            key = f"{position}-{criterion.pk}"
            if posted is not None and key in posted.get("values", {}):
                mu, nu = posted["values"][key]
            elif prefilled:
                mu, nu = prefilled[(position, criterion.pk)]
            else:
                mu, nu = stored.get((response.pk, criterion.pk), (0, 0))
            error = " ".join(errors.get(f"values[{position}][{criterion.name}]", []))
            entry.cells.append(SliderCell(criterion=criterion, mu=mu, nu=nu, error=error))
        displayed.append(entry)
    return displayed


def _page_choices(
    *,
    project: Project,
    annotation: Annotation | None,
    suggestion: Any,
    order: list[int],
    labels: dict[int, str],
    posted: dict[str, Any] | None,
    accept_values: bool,
) -> PageChoices:
    """The binary, Likert and both-bad inputs; ``suggestion`` (when it fills the form) wins over what is stored."""
    both_bad = bool(annotation and annotation.both_bad)
    binary_choice = annotation.binary_choice if annotation and not both_bad else None
    likert_value = annotation.likert_value if annotation else None
    accepted = accept_values or bool(annotation and annotation.accepted_suggestion)
    if posted is not None:
        both_bad = bool(posted.get("both_bad"))
        binary_choice = posted.get("binary_choice", None if both_bad else binary_choice)
        likert_value = posted.get("likert_value", likert_value)
        accepted = bool(posted.get("accepted", accepted))
    if suggestion is not None:
        binary_choice = suggestion.preferred_position
        likert_value = judgment.likert_for_preferred(
            TIE if suggestion.preferred_position is None else suggestion.preferred_position, project.likert_points
        )
    return PageChoices(
        binary_choice=binary_choice,
        binary_options=[(labels[p], p) for p in order] + [("Tie", TIE)],
        likert_value=likert_value,
        both_bad=both_bad,
        accepted=accepted,
    )


def _likert_scale(*, project: Project, order: list[int], labels: dict[int, str]) -> list[dict[str, Any]]:
    """The side-by-side scale's points with their captions, in the annotator's order (Likert, two responses)."""
    if project.mode != Project.Mode.LIKERT or len(order) != 2:
        return []
    points = project.likert_points
    centre = judgment.likert_centre(points)
    scale = []
    for display_point in range(1, points + 1):
        stored_value = judgment.likert_display_to_stored(display_point, points, order)
        distance = abs(display_point - centre)
        if display_point == centre:
            caption = gettext("Equal")
        else:
            label = labels[order[0] if display_point < centre else order[1]]
            # Whole phrases, not a word inserted into one: the word order differs between languages.
            if distance == centre - 1:
                caption = gettext("%(label)s much better") % {"label": label}
            elif distance == 1 and centre >= 4:
                caption = gettext("%(label)s slightly better") % {"label": label}
            else:
                caption = gettext("%(label)s better") % {"label": label}
        scale.append({"display": display_point, "stored": stored_value, "caption": caption})
    return scale


def _shown_suggestion(suggestion: Any, labels: dict[int, str]) -> ShownSuggestion | None:
    if suggestion is None:
        return None
    preferred = suggestion.preferred_position
    return ShownSuggestion(
        preferred_label=_preferred_label(preferred, labels),
        rationale=judgment.rationale_for_viewer(suggestion.rationale, labels),
        is_tie=preferred == TIE,
    )


def _own_label(
    *,
    project: Project,
    annotation: Annotation | None,
    criteria: list[Criterion],
    labels: dict[int, str],
    stage: str,
) -> str:
    """At the resolution step, the annotator's own preference in their letters."""
    if annotation is None or stage != "resolution":
        return ""
    preferred_own = annotation_payload_preferred(project=project, annotation=annotation, criteria=criteria)
    return _preferred_label(preferred_own, labels)


def assignment_for_page(*, project: Project, item: Item, annotator: AbstractBaseUser) -> Assignment | None:
    """The assignment ``item`` is shown under when the annotator opens it by its address; reads only.

    Their own row when they have one (a claim, a label, a skip). Otherwise, while the item has room for their label
    (or they hold an open label request for it), an unsaved assignment with the response order they will be given:
    opening an item claims nothing, and its save takes the slot (annotation.services checks the room again then).
    None when the item is full for them.
    """
    own = Assignment.objects.filter(project=project, item=item, annotator_id=annotator.pk).first()
    if own is not None:
        return own
    now = timezone.now()
    found = (
        Item.objects.filter(pk=item.pk)
        .annotate(
            claims=live_claims_by_others(annotator_id=int(annotator.pk), now=now),
            requested=Exists(
                LabelRequest.objects.filter(item=item, annotator_id=annotator.pk, status=LabelRequest.Status.OPEN)
            ),
        )
        .values("annotation_count", "extra_labels", "claims", "requested")
        .first()
    )
    if found is None:
        return None
    room = found["annotation_count"] + found["claims"] < project.overlap + found["extra_labels"]
    if not room and not found["requested"]:
        return None
    return assignment_drawn(project=project, item=item, annotator=annotator, now=now, expires_at=now)


def _ranking_rows(
    *,
    project: Project,
    order: list[int],
    labels: dict[int, str],
    stored: list[int] | None,
    posted: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], str]:
    """The ranking input of a binary item with three responses or more: its rows (the saved or posted ranking, else
    the screen order) and the hidden field's value, empty until the annotator has ranked (no order is assumed)."""
    if project.mode != Project.Mode.BINARY or len(order) < RANKING_MIN:
        return [], ""
    ranking = (posted or {}).get("ranking") or stored
    valid = isinstance(ranking, list) and sorted(ranking) == sorted(order)
    shown: list[int] = list(ranking) if isinstance(ranking, list) and valid else list(order)
    keys = {position: index + 1 for index, position in enumerate(order)}
    rows = [{"position": p, "label": labels[p], "key": keys[p]} for p in shown]
    return rows, ",".join(str(p) for p in shown) if valid else ""


def _preferred_label(preferred: int | None, labels: dict[int, str]) -> str:
    """ "a tie" or "Response A", in the reader's language."""
    if preferred == TIE:
        return gettext("a tie")
    return gettext("Response %(label)s") % {"label": labels.get(preferred or 0, "?")}
