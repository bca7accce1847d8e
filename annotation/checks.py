"""Checks of the annotator's input and rights, shared by the save, the claim and the skip: each raises
ValidationError with field-level messages and writes nothing."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_noop

from annotation.models import LabelRequest
from projects.models import PERMILLE, TIE, Criterion, Item, Membership, Project, Response
from projects.selectors import role_remembered

_WHOLE_NUMBER = re.compile(r"-?\d+")


def check_annotator(*, project: Project, annotator: AbstractBaseUser) -> None:
    if role_remembered(user=annotator, project_id=project.pk) == Membership.Role.ANNOTATOR:
        return  # checked a moment ago in this request (projects.selectors.project_get_for_annotator)
    if not Membership.objects.filter(project=project, user_id=annotator.pk, role=Membership.Role.ANNOTATOR).exists():
        raise ValidationError({"annotator": "You do not annotate this project."})


def check_annotator_of(*, project: Project, item: Item, annotator: AbstractBaseUser) -> None:
    check_annotator(project=project, annotator=annotator)
    if item.project_id != project.pk:
        raise ValidationError({"item": "This item does not belong to this project."})
    if project.phase == Project.Phase.CLOSED:
        raise ValidationError({"__all__": ValidationError(CLOSED, code="closed")})


PAUSED = (
    "Labelling is paused: the lead handed the remaining items of this project to the LLM, so no item is served and "
    "nothing more can be saved. Your labels are kept; if the lead undoes the handoff, items come back here."
)
CLOSED = "This project is closed: labels can no longer be saved."
#: What a handed-off project still serves: the audit of the handoff, which a lead asks for after handing off.
#: Verification and the other requests were drawn for the collecting phase: they wait until the handoff is undone.
HANDED_OFF_KINDS = (LabelRequest.Kind.AUDIT,)


def request_kinds_served(project: Project) -> tuple[str, ...] | None:
    """The kinds of label request the queue serves in the project's phase; None: every kind."""
    return None if project.phase == Project.Phase.COLLECTING else HANDED_OFF_KINDS


def check_served(*, project: Project, item_id: int, annotator_id: int) -> None:
    """Whether the project's phase lets this person have this item: the one rule of a handoff (or a closed project),
    asked by every request that serves or saves, so a page opened before the handoff, a claim held across it or a
    request drawn before it cannot bring handed-off work back. An audit suspension sets the project collecting
    again and withdraws the audit's requests, so it goes through the same rule.

    Collecting: everything (no query). Handed off: only the person's open requests of :data:`HANDED_OFF_KINDS` for
    the item. Closed: nothing. Raises ValidationError (code ``paused`` or ``closed``) with the page's message.
    """
    if project.phase == Project.Phase.COLLECTING:
        return
    if project.phase == Project.Phase.HANDED_OFF:
        if LabelRequest.objects.filter(
            project_id=project.pk,
            item_id=item_id,
            annotator_id=annotator_id,
            kind__in=HANDED_OFF_KINDS,
            status=LabelRequest.Status.OPEN,
        ).exists():
            return
        raise ValidationError({"__all__": ValidationError(PAUSED, code="paused")})
    raise ValidationError({"__all__": ValidationError(CLOSED, code="closed")})


def served(*, project: Project, item_id: int, annotator_id: int) -> bool:
    """:func:`check_served` as a yes or no (the queue skips what it may not serve instead of failing)."""
    try:
        check_served(project=project, item_id=item_id, annotator_id=annotator_id)
    except ValidationError:
        return False
    return True


def refusal_code(error: ValidationError) -> str | None:
    """``paused`` or ``closed`` when ``error`` came from :func:`check_served`, else None."""
    for entry in getattr(error, "error_dict", {}).get("__all__", []):
        if entry.code in ("paused", "closed"):
            return str(entry.code)
    return None


def whole_number(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and _WHOLE_NUMBER.fullmatch(raw.strip()):
        return int(raw.strip())
    return None


def value_error_key(position: int, criterion_name: str) -> str:
    return f"values[{position}][{criterion_name}]"


def check_ifs_values(  # noqa: C901
    *, values: Any, responses: Sequence[Response], criteria: Sequence[Criterion]
) -> dict[tuple[int, str], tuple[int, int]]:
    """Every response × criterion exactly once, whole per-mille, μ, ν ≥ 0 and μ + ν ≤ 1000."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes) or not values:
        raise ValidationError({"values": gettext("Give (μ, ν) for every response and criterion.")})
    positions = {response.position for response in responses}
    names = {criterion.name for criterion in criteria}
    errors: dict[str, list[str]] = {}
    cleaned: dict[tuple[int, str], tuple[int, int]] = {}
    for index, entry in enumerate(values):
        if not isinstance(entry, Mapping):
            errors.setdefault("values", []).append(
                f"Entry {index + 1} is not an object with response, criterion, mu, nu."
            )
            continue
        position = whole_number(entry.get("response"))
        name = entry.get("criterion")
        if position not in positions:
            errors.setdefault("values", []).append(
                f"Entry {index + 1}: response must be one of the stored positions {sorted(positions)}."
            )
            continue
        if not isinstance(name, str) or name not in names:
            errors.setdefault("values", []).append(
                f"Entry {index + 1}: criterion must be one of {', '.join(sorted(names))}."
            )
            continue
        key = value_error_key(position, name)
        if (position, name) in cleaned or key in errors:
            errors.setdefault(key, []).append(gettext("Given more than once."))
            continue
        mu, nu = whole_number(entry.get("mu")), whole_number(entry.get("nu"))
        problems = []
        for label, number in (("μ", mu), ("ν", nu)):
            if number is None:
                problems.append(f"{label} must be a whole number of per-mille (0 to 1000).")
            elif not 0 <= number <= PERMILLE:
                problems.append(f"{label} must be from 0 to 1000 ‰ (0 to 100 %); got {number}.")
        if not problems and mu is not None and nu is not None and mu + nu > PERMILLE:
            problems.append(
                f"Support and opposition add up to {(mu + nu) / 10:g} %; together they can be at most 100 %."
            )
        if problems:
            errors[key] = problems
            continue
        cleaned[(position, name)] = (int(mu or 0), int(nu or 0))
    for position in sorted(positions):
        for name in sorted(names):
            key = value_error_key(position, name)
            if (position, name) not in cleaned and key not in errors:
                errors[key] = [gettext("Missing: every response needs μ and ν for every criterion.")]
    if errors:
        raise ValidationError(errors)
    return cleaned


def check_judgment(
    *,
    project: Project,
    responses: Sequence[Response],
    criteria: Sequence[Criterion],
    values: Any,
    binary_choice: Any,
    likert_value: Any,
) -> tuple[dict[tuple[int, str], tuple[int, int]], int | None, int | None]:
    """The judgment in the project's mode, cleaned; anything for another mode is refused, not ignored."""
    mode = project.mode
    if mode == Project.Mode.IFS:
        if binary_choice is not None or likert_value is not None:
            raise ValidationError({"__all__": "This project labels with IFS sliders, not a choice or a scale."})
        return check_ifs_values(values=values, responses=responses, criteria=criteria), None, None
    if values:
        raise ValidationError({"values": f"This project labels in {mode} mode; slider values are not accepted."})
    if mode == Project.Mode.BINARY:
        if likert_value is not None:
            raise ValidationError({"likert_value": "This project labels with a binary choice, not a scale."})
        choice = whole_number(binary_choice)
        allowed = [r.position for r in responses] + [TIE]
        if binary_choice is None or binary_choice == "":
            raise ValidationError({"binary_choice": gettext("Choose the better response, or tie.")})
        if choice not in allowed:
            raise ValidationError({"binary_choice": f"Expected a stored position {allowed[:-1]} or -1 for a tie."})
        return {}, choice, None
    if binary_choice is not None:
        raise ValidationError({"binary_choice": "This project labels on a scale, not with a binary choice."})
    if len(responses) != 2:
        raise ValidationError({"likert_value": "A side-by-side scale needs exactly two responses."})
    point = whole_number(likert_value)
    if likert_value is None or likert_value == "":
        raise ValidationError({"likert_value": gettext("Choose a point on the scale.")})
    if point is None or not 1 <= point <= project.likert_points:
        raise ValidationError({"likert_value": f"Expected a whole number from 1 to {project.likert_points}."})
    return {}, None, point


RANKING_MIN = 3


def check_ranking(
    *, project: Project, responses: Sequence[Response], ranking: Any, choice: int | None
) -> list[int] | None:
    """A ranking of three or more responses in binary mode: every stored position once, best first. Its head is the
    binary choice (given or not), so the binary figures read a ranking as its pick; two responses are a plain choice.
    """
    if ranking in (None, "", []):
        return None
    positions = sorted(r.position for r in responses)
    if project.mode != Project.Mode.BINARY:
        raise ValidationError({"ranking": "Only a binary project ranks its responses."})
    if len(positions) < RANKING_MIN:
        raise ValidationError({"ranking": "Two responses are compared with a choice, not ranked."})
    if not isinstance(ranking, list | tuple) or any(whole_number(p) is None for p in ranking):
        raise ValidationError({"ranking": "Expected the stored positions, best first."})
    order = [int(p) for p in ranking]
    if sorted(order) != positions:
        raise ValidationError({"ranking": f"Rank every response once: expected the positions {positions}, best first."})
    if choice is not None and choice != order[0]:
        raise ValidationError({"ranking": "The ranking's first response must be the chosen one."})
    return order


def check_both_bad(*, project: Project, responses: Sequence[Response], both_bad: Any, binary_choice: Any) -> bool:
    """ "Both bad" is a binary judgment of two responses (three or more are ranked); it stands for a tie."""
    if both_bad in (None, False, ""):
        return False
    if both_bad is not True:
        raise ValidationError({"both_bad": "Expected true or false."})
    if project.mode != Project.Mode.BINARY or len(responses) != 2:
        raise ValidationError({"both_bad": "Only a binary choice between two responses can say both are bad."})
    if binary_choice not in (None, "", TIE):
        raise ValidationError({"both_bad": "Both bad prefers neither response: leave the choice out, or give -1."})
    return True


def check_client_token(client_token: Any) -> str | None:
    if client_token in (None, ""):
        return None
    if not isinstance(client_token, str) or len(client_token) > 64 or not client_token.isprintable():
        raise ValidationError({"client_token": "Expected a string of at most 64 printable characters."})
    return client_token


SKIP_REASON_MAX = 300
#: The skip panel's listed reasons; "Other" asks for the annotator's own words.
SKIP_REASONS: tuple[str, ...] = (
    # Stored in English (the lead reads them); the skip panel shows them translated.
    gettext_noop("I cannot judge this topic"),
    gettext_noop("The prompt is unclear or broken"),
    gettext_noop("A response is missing or broken"),
    gettext_noop("Harmful or disturbing content"),
)


def check_skip_reason(reason: Any) -> str:
    """The reason of a skip, stripped: required and short (the lead reads them to fix bad items)."""
    reason = str(reason or "").strip()
    if not reason:
        raise ValidationError({"skip_reason": gettext("Say why you skip this item (it helps the lead fix bad items).")})
    if len(reason) > SKIP_REASON_MAX:
        raise ValidationError(
            {"skip_reason": gettext("Keep the reason under %(max)d characters.") % {"max": SKIP_REASON_MAX}}
        )
    return reason
