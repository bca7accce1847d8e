"""Where each unexposed label came from, and the unaided judgment of a label that was exposed later.

Blind agreement is a design-based estimate over the fixed random blind sample (suggestions.figures); every other
unexposed label is "unaided" but not a random draw of the population, so each is tagged with its source:

* ``random_sample``: a label on an item of the fixed random blind sample (its inclusion probability from import,
  projects.blind). Whatever brought the person to the item, the item was drawn at random, so it counts.
* ``calibration`` / ``certification`` / ``audit``: the answer to a label request of that kind on another item. These
  draws have their own inclusion probabilities (calibration oversamples low confidence on purpose): they enter only
  through their own Hájek estimates (suggestions.certification), never pooled with the random sample.
* ``verification``: a verification request answered with the model's answer hidden (``verify_visibility: blind``).
* ``after_label``: the first save of an after-label project, before its resolution step.
* ``import``: an imported label saved without exposure.
* ``other``: any other unexposed label (a project whose display changed while labelling, for instance).

In after-label mode a person who changes their label at the resolution step saved it after seeing the model; their
unaided judgment is still in the revisions. :func:`unaided_revisions` reads it: the last revision saved before the
first exposed one (the person's final word before they saw the model), so what they do at the resolution step never
removes their label from the blind comparison, nor keeps only the labels that already agreed.
"""

from __future__ import annotations

from typing import Any

from annotation.models import AnnotationRevision, LabelRequest
from projects.models import Project
from projects.preference import preferred_position

RANDOM_SAMPLE = "random_sample"
SOURCES = (
    RANDOM_SAMPLE,
    LabelRequest.Kind.CALIBRATION.value,
    LabelRequest.Kind.CERTIFICATION.value,
    LabelRequest.Kind.AUDIT.value,
    LabelRequest.Kind.VERIFICATION.value,
    "after_label",
    "import",
    "other",
)
#: How each source enters blind agreement (the card and the API say the same).
USE = {
    RANDOM_SAMPLE: "weighted by the blind sample's inclusion probability",
    LabelRequest.Kind.CALIBRATION.value: "own Hájek estimate beside it, from the draw's inclusion probabilities",
    LabelRequest.Kind.CERTIFICATION.value: "own Hájek estimate beside it, from the draw's inclusion probabilities",
    LabelRequest.Kind.AUDIT.value: "own sequential test on the handed-off items (the audit)",
    LabelRequest.Kind.VERIFICATION.value: "not used: no inclusion probability",
    "after_label": "not used: no inclusion probability",
    "import": "not used: no inclusion probability",
    "other": "not used: no inclusion probability",
}
# Answers of several kinds on one item by one person: the one with a recorded probability names the source.
_KIND_ORDER = (
    LabelRequest.Kind.CERTIFICATION,
    LabelRequest.Kind.CALIBRATION,
    LabelRequest.Kind.AUDIT,
    LabelRequest.Kind.VERIFICATION,
)


def answered_request_kinds(*, project: Project, item_ids: list[int]) -> dict[tuple[int, int], str]:
    """(item id, annotator id) → the kind of the person's answered request for the item (blind kinds first)."""
    kinds: dict[tuple[int, int], str] = {}
    rows = LabelRequest.objects.filter(project=project, status=LabelRequest.Status.ANSWERED, item_id__in=item_ids)
    if project.verify_visibility != Project.VerifyVisibility.BLIND:
        rows = rows.exclude(kind=LabelRequest.Kind.VERIFICATION)
    for item_id, annotator_id, kind in rows.values_list("item_id", "annotator_id", "kind").order_by():
        key = (item_id, annotator_id)
        if key not in kinds or _KIND_ORDER.index(kind) < _KIND_ORDER.index(kinds[key]):
            kinds[key] = kind
    return kinds


def label_source(*, project: Project, in_sample: bool, request_kind: str | None, annotation_source: str) -> str:
    """The source of one unexposed label (module docstring)."""
    if in_sample:
        return RANDOM_SAMPLE
    if request_kind is not None:
        return request_kind
    if annotation_source == "import":
        return "import"
    if project.suggestion_display == Project.SuggestionDisplay.AFTER_LABEL:
        return "after_label"
    return "other"


def unaided_revisions(*, project: Project, annotation_ids: list[int]) -> dict[int, int]:
    """Annotation id → the position its last revision before the first exposed one prefers (TIE for none), for
    those of ``annotation_ids`` (annotations saved after an exposure) that have such a revision."""
    if not annotation_ids:
        return {}
    weights = dict(project.criteria.values_list("name", "weight"))
    rows = (
        AnnotationRevision.objects.filter(annotation_id__in=annotation_ids)
        .order_by("annotation_id", "number")
        .values_list("annotation_id", "suggestion_shown", "payload")
    )
    before: dict[int, dict[str, Any]] = {}
    exposed: set[int] = set()
    for annotation_id, shown, payload in rows.iterator(chunk_size=2000):
        if annotation_id in exposed:
            continue
        if shown:
            exposed.add(annotation_id)
        else:
            before[annotation_id] = payload or {}
    return {annotation_id: _payload_preferred(project, weights, payload) for annotation_id, payload in before.items()}


def _payload_preferred(project: Project, weights: dict[str, float], payload: dict[str, Any]) -> int:
    values = [
        (int(v["response"]), float(weights.get(v["criterion"], 0.0)), int(v["mu"]), int(v["nu"]))
        for v in payload.get("values") or ()
    ]
    return preferred_position(
        mode=str(payload.get("mode") or project.mode),
        choice=payload.get("binary_choice"),
        likert_value=payload.get("likert_value"),
        likert_points=project.likert_points,
        values=values,
        tie_tolerance=project.tie_tolerance,
    )


__all__ = ["RANDOM_SAMPLE", "SOURCES", "USE", "answered_request_kinds", "label_source", "unaided_revisions"]
