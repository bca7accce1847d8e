"""Reads for the annotator: their own annotations, the page context, and whether a suggestion may be shown.

Every function takes a project the caller reached through projects.selectors (membership checked) and only ever
returns the calling annotator's own rows: annotators never read other annotators' labels.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, F, IntegerField, Prefetch, Q, Sum
from django.db.models.functions import Least
from markdown_it import MarkdownIt

from annotation import judgment
from annotation.models import Annotation, Assignment, SuggestionExposure
from annotation.repeat_selectors import repeat_open_for
from annotation.request_selectors import requests_verifying, requests_withholding
from projects.models import TIE, Criterion, Item, Membership, Project, Response, Suggestion, SuggestionValue
from projects.selectors import item_responses, project_criteria

AnyUser = AbstractBaseUser | AnonymousUser

# html=False: response texts are untrusted model output; raw HTML is shown as text, never executed.
# markdown-it also refuses javascript:/vbscript: links by default.
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


# Scraped prompts often carry literal <br> tags; they become markdown hard breaks instead of visible tag text.
_BR_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)


# A pure function of the text, and each item is shown to `overlap` annotators (and again on reloads and edits):
# the process keeps the latest renders instead of parsing the same responses again.
@functools.lru_cache(maxsize=512)  # bounded: long responses are tens of kB each
def markdown_render(text: str) -> str:
    return _markdown.render(_BR_TAG.sub("  \n", text))


# --- suggestions ------------------------------------------------------------------------------------------------

PURPOSE_PAGE = "page"  # shown with the item, before or while labelling
PURPOSE_ACCEPT = "accept"  # the Accept button
PURPOSE_RESOLUTION = "resolution"  # the after-label resolution step


def suggestion_visible_for(
    *,
    project: Project,
    item: Item,
    annotator: AnyUser,
    purpose: str = PURPOSE_PAGE,
    has_saved: bool | None = None,
    with_values: bool = True,
) -> Suggestion | None:
    """The one decision whether this annotator may see this item's suggestion now; None means show nothing.

    - Only suggestions with status "ok" are ever shown (a failed generation is not a label).
    - blind_sample: never for a blind item, whatever the purpose, before or after a save (a blind item stays blind
      for its annotators); other items behave as before_label.
    - before_label: with the item and through Accept; there is no resolution step.
    - after_label: never before the annotator's own save; afterwards only on the resolution step.
    - A calibration, certification or audit request (``LabelRequest``) held or answered by this annotator for this
      item withholds it for every purpose, in every display mode: their label is blind evidence about the model.
      Folded into the one suggestion query, so the check costs no statement. With ``verify_visibility: blind`` a
      verification request withholds it the same way (its answer is then a blind label like any other).
    """
    if item.project_id != project.pk:
        return None
    display = project.suggestion_display
    if display == Project.SuggestionDisplay.BLIND_SAMPLE and item.is_blind:
        return None
    if display == Project.SuggestionDisplay.AFTER_LABEL:
        if purpose != PURPOSE_RESOLUTION:
            return None
        if has_saved is None:
            has_saved = Annotation.objects.filter(item=item, annotator_id=annotator.pk).exists()
        if not has_saved:
            return None
    elif purpose == PURPOSE_RESOLUTION:
        return None
    held_blind = requests_withholding(project=project, annotator_id=annotator.pk)
    # ``verifying``: the person holds an open verification request for the item (the page pre-fills its answer).
    verifying = requests_verifying(annotator_id=annotator.pk)
    suggestions = (
        Suggestion.objects.filter(item=item, status=Suggestion.Status.OK)
        .exclude(Exists(held_blind))
        .annotate(verifying=Exists(verifying))
    )
    if with_values:
        suggestions = suggestions.prefetch_related(
            Prefetch("values", queryset=SuggestionValue.objects.select_related("response"))
        )
    return suggestions.first()


def suggestion_prefilled_values(
    *, suggestion: Suggestion, responses: list[Response], criteria: list[Criterion]
) -> dict[tuple[int, int], tuple[int, int]]:
    """(μ, ν) per (stored position, criterion id) that Accept puts on the sliders.

    The suggestion's own (μ, ν) when it has them for a response (the same for every criterion: a suggestion is one
    judgment per response), otherwise the documented defaults in annotation.judgment.
    """
    own = {value.response.position: (value.mu, value.nu) for value in suggestion.values.all()}
    filled: dict[tuple[int, int], tuple[int, int]] = {}
    for response in responses:
        if response.position in own:
            pair = own[response.position]
        elif suggestion.preferred_position == TIE:
            pair = judgment.ACCEPT_DEFAULT_TIE
        elif response.position == suggestion.preferred_position:
            pair = judgment.ACCEPT_DEFAULT_PREFERRED
        else:
            pair = judgment.ACCEPT_DEFAULT_OTHER
        for criterion in criteria:
            filled[(response.position, criterion.pk)] = pair
    return filled


# --- own annotations --------------------------------------------------------------------------------------------


def annotation_get_own(*, project: Project, item: Item, annotator: AnyUser) -> Annotation | None:
    return (
        Annotation.objects.filter(project=project, item=item, annotator_id=annotator.pk)
        .prefetch_related("values")
        .first()
    )


def assignment_get_own(*, project: Project, item: Item, annotator: AnyUser) -> Assignment | None:
    return Assignment.objects.filter(project=project, item=item, annotator_id=annotator.pk).first()


def annotation_payload_preferred(*, project: Project, annotation: Annotation, criteria: list[Criterion]) -> int:
    """The stored position this saved judgment prefers (TIE for none), in the project's mode."""
    if annotation.mode == Project.Mode.BINARY:
        return annotation.binary_choice if annotation.binary_choice is not None else TIE
    if annotation.mode == Project.Mode.LIKERT:
        return judgment.preferred_from_likert(annotation.likert_value or 0, project.likert_points)
    names = {criterion.pk: criterion.name for criterion in criteria}
    weights = {criterion.name: criterion.weight for criterion in criteria}
    positions = {value.response_id: value for value in annotation.values.all()}
    response_positions = dict(Response.objects.filter(item_id=annotation.item_id).values_list("id", "position"))
    values = [
        {"response": response_positions[v.response_id], "criterion": names[v.criterion_id], "mu": v.mu, "nu": v.nu}
        for v in positions.values()
    ]
    return judgment.preferred_from_values(values, weights, project.tie_tolerance)


def annotation_disagrees_with_suggestion(
    *, project: Project, annotation: Annotation, suggestion: Suggestion, criteria: list[Criterion]
) -> bool:
    own = annotation_payload_preferred(project=project, annotation=annotation, criteria=criteria)
    return own != suggestion.preferred_position


def resolution_needed(*, project: Project, item: Item, annotator: AnyUser) -> bool:
    """After-label mode: whether this annotator's saved label disagrees with the LLM, so the step is shown."""
    suggestion = suggestion_visible_for(project=project, item=item, annotator=annotator, purpose=PURPOSE_RESOLUTION)
    if suggestion is None:
        return False
    annotation = annotation_get_own(project=project, item=item, annotator=annotator)
    if annotation is None:
        return False
    criteria = list(project.criteria.all())
    return annotation_disagrees_with_suggestion(
        project=project, annotation=annotation, suggestion=suggestion, criteria=criteria
    )


def annotation_previous(*, project: Project, annotator: AnyUser, before_item_id: int | None) -> Item | None:
    """The item this annotator labelled or skipped just before ``before_item_id`` (in the order first claimed)."""
    history = Assignment.objects.filter(
        project=project, annotator_id=annotator.pk, status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED]
    )
    if before_item_id is not None:
        current = Assignment.objects.filter(project=project, annotator_id=annotator.pk, item_id=before_item_id).first()
        if current is not None:
            history = history.filter(pk__lt=current.pk)
    previous = history.order_by("-pk").select_related("item").first()
    return previous.item if previous else None


# --- the page ---------------------------------------------------------------------------------------------------


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
) -> dict[str, Any]:
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
    annotation = annotation_get_own(project=project, item=item, annotator=annotator)
    if annotation is not None and repeat_open_for(project=project, item=item, annotator=annotator) is not None:
        # An unannounced repeat: the page is the item as first shown, without the earlier judgment.
        annotation = None

    purpose = PURPOSE_RESOLUTION if stage == "resolution" else PURPOSE_PAGE
    suggestion = suggestion_visible_for(
        project=project,
        item=item,
        annotator=annotator,
        purpose=purpose,
        has_saved=annotation is not None,
        with_values=accept_values,  # only Accept fills the sliders from the suggestion's own values
    )
    labels = {position: judgment.display_label(index) for index, position in enumerate(order)}

    stored = _values_from_annotation(annotation)
    prefilled: dict[tuple[int, int], tuple[int, int]] = {}
    # A verification request shows the model's answer filled in, to keep (save as is) or change.
    verifying = bool(getattr(suggestion, "verifying", False)) and annotation is None and stage == "label"
    if (accept_values or verifying) and suggestion is not None:
        prefilled = suggestion_prefilled_values(suggestion=suggestion, responses=responses, criteria=criteria)

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
            elif (response.pk, criterion.pk) in stored:
                mu, nu = stored[(response.pk, criterion.pk)]
            else:
                mu, nu = 0, 0
            error = " ".join(errors.get(f"values[{position}][{criterion.name}]", []))
            entry.cells.append(SliderCell(criterion=criterion, mu=mu, nu=nu, error=error))
        displayed.append(entry)

    binary_choice = annotation.binary_choice if annotation else None
    likert_value = annotation.likert_value if annotation else None
    if posted is not None:
        binary_choice = posted.get("binary_choice", binary_choice)
        likert_value = posted.get("likert_value", likert_value)
    if suggestion is not None and (accept_values or (verifying and posted is None)):
        binary_choice = suggestion.preferred_position
        likert_value = judgment.likert_for_preferred(suggestion.preferred_position or TIE, project.likert_points)

    likert_scale = []
    if project.mode == Project.Mode.LIKERT and len(order) == 2:
        points = project.likert_points
        centre = judgment.likert_centre(points)
        for display_point in range(1, points + 1):
            stored_value = judgment.likert_display_to_stored(display_point, points, order)
            distance = abs(display_point - centre)
            strength = " much" if distance == centre - 1 else " slightly" if distance == 1 and centre >= 4 else ""
            if display_point < centre:
                caption = f"{labels[order[0]]}{strength} better"
            elif display_point > centre:
                caption = f"{labels[order[1]]}{strength} better"
            else:
                caption = "Equal"
            likert_scale.append({"display": display_point, "stored": stored_value, "caption": caption})

    shown = None
    if suggestion is not None:
        preferred = suggestion.preferred_position
        shown = ShownSuggestion(
            preferred_label="a tie" if preferred == TIE else f"Response {labels.get(preferred or 0, '?')}",
            rationale=judgment.rationale_for_viewer(suggestion.rationale, labels),
            is_tie=preferred == TIE,
        )

    own_label = ""
    if annotation is not None and stage == "resolution":
        preferred_own = annotation_payload_preferred(project=project, annotation=annotation, criteria=criteria)
        own_label = "a tie" if preferred_own == TIE else f"Response {labels.get(preferred_own, '?')}"

    accepted = accept_values or bool(annotation and annotation.accepted_suggestion)
    if posted is not None:
        accepted = bool(posted.get("accepted", accepted))
    return {
        "project": project,
        "item": item,
        "suggestion_object": suggestion,
        "prompt_html": markdown_render(item.prompt),
        "guidelines_html": markdown_render(project.guidelines) if project.guidelines else "",
        "responses": displayed,
        "criteria": criteria,
        "annotation": annotation,
        "assignment": assignment,
        "binary_choice": binary_choice,
        "binary_options": [(labels[p], p) for p in order] + [("Tie", TIE)],
        "likert_value": likert_value,
        "likert_scale": likert_scale,
        "suggestion": shown,
        "stage": stage,
        "verifying": verifying,
        "own_label": own_label,
        "accepted": accepted,
        "errors": errors,
        "form_errors": errors.get("__all__", []),
        "time_spent_ms": annotation.time_spent_ms if annotation else 0,
    }


# --- the annotator's home ---------------------------------------------------------------------------------------


@dataclass
class HomeRow:
    project: Project
    role: str
    done: int = 0
    skipped: int = 0
    open_for_you: int = 0
    items: int = 0
    filled: int = 0

    @property
    def is_lead(self) -> bool:
        return self.role == Membership.Role.LEAD

    @property
    def is_annotator(self) -> bool:
        return self.role == Membership.Role.ANNOTATOR

    @property
    def paused(self) -> bool:
        """Labelling stopped (handed off to the LLM or closed): the queue serves nothing, whatever is short."""
        return self.project.phase != Project.Phase.COLLECTING

    @property
    def project_percent(self) -> int:
        wanted = self.items * self.project.overlap
        return round(100 * self.filled / wanted) if wanted else 0


def home_rows_for_user(*, user: AnyUser) -> list[HomeRow]:
    """The user's projects with their own progress, in four queries however many projects and items."""
    if not user.is_authenticated:
        return []
    memberships = Membership.objects.filter(user_id=user.pk).select_related("project").order_by("project__name")
    rows = {m.project_id: HomeRow(project=m.project, role=m.role) for m in memberships}
    if not rows:
        return []
    ids = list(rows)
    for done_entry in (
        Annotation.objects.filter(annotator_id=user.pk, project_id__in=ids).values("project_id").annotate(n=Count("id"))
    ):
        rows[done_entry["project_id"]].done = done_entry["n"]
    for item_entry in (
        Item.objects.filter(project_id__in=ids)
        .values("project_id")
        .annotate(
            total=Count("id"),
            open=Count("id", filter=Q(annotation_count__lt=F("project__overlap") + F("extra_labels"))),
            # Labels collected so far, each item counted up to the overlap wanted.
            filled=Sum(Least("annotation_count", "project__overlap", output_field=IntegerField())),
        )
    ):
        rows[item_entry["project_id"]].items = item_entry["total"]
        rows[item_entry["project_id"]].open_for_you = item_entry["open"]
        rows[item_entry["project_id"]].filled = item_entry["filled"] or 0
    # Items still open that this user already labelled or skipped are not open for them.
    for history_entry in (
        Assignment.objects.filter(
            annotator_id=user.pk,
            project_id__in=ids,
            status__in=[Assignment.Status.DONE, Assignment.Status.SKIPPED],
        )
        .values("project_id")
        .annotate(
            skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
            still_open=Count(
                "id", filter=Q(item__annotation_count__lt=F("project__overlap") + F("item__extra_labels"))
            ),
        )
    ):
        row = rows[history_entry["project_id"]]
        row.skipped = history_entry["skipped"]
        row.open_for_you = max(0, row.open_for_you - history_entry["still_open"])
    for row in rows.values():
        if row.paused:
            row.open_for_you = 0  # the queue only serves collecting projects: nothing is open for anyone
    return list(rows.values())


@dataclass
class QueueProgress:
    done: int
    skipped: int
    total: int = 0

    @property
    def current(self) -> int:
        """The number of the item in hand: the next after those already labelled or skipped."""
        return min(self.done + self.skipped + 1, max(self.total, 1))

    @property
    def first_visit(self) -> bool:
        """Nothing labelled or skipped in this project yet: the page opens the guidelines."""
        return self.done == 0 and self.skipped == 0


def home_progress_for(*, project: Project, annotator: AnyUser) -> QueueProgress:
    """This annotator's own counts in one project and the project's item count (one query: the page's save-and-next
    has a statement budget). Items LEFT JOIN assignments: each assignment row belongs to one item."""
    own = Q(assignments__annotator_id=annotator.pk)
    counts = Item.objects.filter(project=project).aggregate(
        total=Count("id", distinct=True),
        done=Count("assignments", filter=own & Q(assignments__status=Assignment.Status.DONE)),
        skipped=Count("assignments", filter=own & Q(assignments__status=Assignment.Status.SKIPPED)),
    )
    return QueueProgress(done=counts["done"] or 0, skipped=counts["skipped"] or 0, total=counts["total"] or 0)


def exposures_for(*, project: Project, item: Item, annotator: AnyUser) -> list[SuggestionExposure]:
    return list(SuggestionExposure.objects.filter(project=project, item=item, annotator_id=annotator.pk))


def annotation_created_by_save(*, annotation: Annotation, client_token: str | None) -> bool:
    """Whether the save that returned ``annotation`` is the one that created it (the API's 201 against 200).

    Asked after annotation_save, never before: saves of one annotator × item are serialised inside the service,
    so a check made before it races with a concurrent first save. With a client token, the save that created the
    label and every replay of it (the same token: a retry, a double click) answer alike, because revision 1 carries
    that token. Without one, the creating save is the one that wrote revision 1; annotation_save hands back the
    instance it wrote, so its revision count is this save's own.
    """
    if client_token:
        return annotation.revisions.filter(number=1, client_token=client_token).exists()
    return annotation.revision_count == 1
