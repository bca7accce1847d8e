"""Writes to projects, members, criteria and the blind sample. Validate first (check_*), then act."""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from django.utils.text import slugify

from config import events
from projects import blind, preference
from projects.llm_url import LLMURLRefused, check_llm_base_url
from projects.models import Criterion, ImportedAnnotator, Item, Membership, Project
from projects.selectors import criteria_forget

# Settings a lead may change through the page or the API, with their validation below.
EDITABLE_SETTINGS = (
    "name",
    "description",
    "guidelines",
    "mode",
    "likert_points",
    "overlap",
    "suggestion_display",
    "verify_visibility",
    "blind_rate",
    "minimum_blind_sample",
    "tie_tolerance",
    "handoff_agreement_threshold",
    "handoff_minimum_blind_comparisons",
    "handoff_rule",
    "handoff_trigger",
    "aggregation_operator",
    "weight_consistency",
    "weight_expertise",
    "weight_agreement",
    "repeat_rate",
    "repeat_delay_items",
    "repeat_delay_minutes",
    "adaptive_cap",
    "adaptive_budget",
    "adaptive_hesitation",
    "adaptive_dispute",
    "adaptive_expert_id",
    "llm_base_url",
    "llm_model",
    "llm_api_key",
    "llm_instruction_template",
)


# Settings the stored figures are computed from (aggregates, weights, agreement, progress, the handoff verdict).
# Changing one bumps Project.settings_version, which marks every figure stale until the recompute it schedules lands.
FIGURE_SETTINGS = frozenset(
    {
        "mode",
        "likert_points",
        "overlap",
        "blind_rate",
        "minimum_blind_sample",
        "tie_tolerance",
        "handoff_agreement_threshold",
        "handoff_minimum_blind_comparisons",
        "handoff_rule",
        "handoff_trigger",
        "aggregation_operator",
        "weight_consistency",
        "weight_expertise",
        "weight_agreement",
        # The adaptive plan is drawn by the project recompute: a changed rule needs one.
        "adaptive_cap",
        "adaptive_budget",
        "adaptive_hesitation",
        "adaptive_dispute",
        "adaptive_expert_id",
    }
)


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60] or "project"
    slug = base
    while Project.objects.filter(slug=slug).exists():
        slug = f"{base}-{secrets.token_hex(3)}"
    return slug


TEXT_SETTINGS = (
    "name",
    "description",
    "guidelines",
    "llm_base_url",
    "llm_model",
    "llm_api_key",
    "llm_instruction_template",
)


# The text columns without a length of their own (TextField) still have one: a megabyte of description is a
# mistake or an attack, and every page that shows it would carry it.
TEXT_SETTING_LIMITS = {"description": 20_000, "guidelines": 50_000, "llm_instruction_template": 20_000}


def _text_problem(raw: Any, field: Any) -> str | None:
    # PostgreSQL refuses NUL characters and over-long values with an exception; say so before writing.
    if not isinstance(raw, str):
        return "Expected a text."
    if "\x00" in raw:
        return "NUL characters (\\u0000) are not allowed in text."
    limit = field.max_length if field.max_length is not None else TEXT_SETTING_LIMITS.get(field.name)
    if limit is not None and len(raw) > limit:
        return f"At most {limit} characters (got {len(raw)})."
    return None


def check_project_settings(*, project: Project, changes: dict[str, Any]) -> None:
    """Raise ValidationError naming each bad field; nothing is written.

    Each step below adds the errors of one kind of rule; a later step skips a field an earlier one refused."""
    errors: dict[str, str] = {}
    unknown = set(changes) - set(EDITABLE_SETTINGS)
    if unknown:
        errors["__all__"] = f"Unknown settings: {', '.join(sorted(unknown))}."
    for step in (
        _check_choices,
        _check_number_ranges,
        _check_expert,
        _check_mode_and_scale,
        _check_texts,
        _check_weight_coefficients,
        _check_fixed_once_labelling_started,
    ):
        step(project, changes, errors)
    if errors:
        raise ValidationError(errors)


Errors = dict[str, str]

_CHOICE_SETTINGS: dict[str, type[models.TextChoices]] = {
    "mode": Project.Mode,
    "suggestion_display": Project.SuggestionDisplay,
    "verify_visibility": Project.VerifyVisibility,
    "handoff_rule": Project.HandoffRule,
    "handoff_trigger": Project.HandoffTrigger,
    "aggregation_operator": Project.Operator,
}
_FRACTION_SETTINGS = (
    ("blind_rate", 0.0, 1.0),
    ("tie_tolerance", 0.0, 2.0),
    ("handoff_agreement_threshold", 0.0, 1.0),
    ("weight_consistency", 0.0, 1.0),
    ("weight_expertise", 0.0, 1.0),
    ("weight_agreement", 0.0, 1.0),
    ("repeat_rate", 0.0, 0.5),
    ("adaptive_hesitation", 0.0, 1.0),
    ("adaptive_dispute", 0.0, 1.0),
)
_WHOLE_SETTINGS = (
    ("overlap", 1, 100),
    ("likert_points", 3, 11),
    ("minimum_blind_sample", 0, 1_000_000),
    ("handoff_minimum_blind_comparisons", 1, 1_000_000),
    ("repeat_delay_items", 0, 10_000),
    ("repeat_delay_minutes", 0, 100_000),
    ("adaptive_cap", 0, 100),
    ("adaptive_budget", 0, 10_000_000),
)
_COEFFICIENTS = ("weight_consistency", "weight_expertise", "weight_agreement")


def _check_choices(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    for field, choices in _CHOICE_SETTINGS.items():
        if field in changes and changes[field] not in choices.values:
            errors[field] = f"Expected one of {', '.join(choices.values)}."


def _check_number_ranges(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    for field, low, high in _FRACTION_SETTINGS:
        raw = changes.get(field)
        if field not in changes:
            continue
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            errors[field] = "Expected a number."
        elif not low <= raw <= high:
            errors[field] = f"Expected a number from {low:g} to {high:g}."
    for field, whole_low, whole_high in _WHOLE_SETTINGS:
        raw = changes.get(field)
        if field not in changes:
            continue
        if isinstance(raw, bool) or not isinstance(raw, int):
            errors[field] = "Expected a whole number."
        elif not whole_low <= raw <= whole_high:
            errors[field] = f"Expected a whole number from {whole_low} to {whole_high}."


def _check_expert(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    expert = changes.get("adaptive_expert_id")
    if expert is not None and (
        isinstance(expert, bool)
        or not isinstance(expert, int)
        or not project.pk
        or not Membership.objects.filter(project_id=project.pk, user_id=expert).exists()
    ):
        errors["adaptive_expert_id"] = "Expected a member of the project (or nobody)."


def _check_mode_and_scale(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    # A study's design is written with its mode; a mode switch alone would leave a study without a plan.
    mode_switch = "mode" in changes and "mode" not in errors and changes["mode"] != project.mode
    if mode_switch and Project.Mode.CROSSOVER in {changes["mode"], project.mode}:
        errors["mode"] = "A crossover method study is set up on its own page, not here."
    if "likert_points" in changes and "likert_points" not in errors:
        try:
            preference.likert_points_check(changes["likert_points"])
        except ValueError:
            errors["likert_points"] = "Expected an odd number, so the scale has a middle (no preference)."


def _check_texts(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    for field in TEXT_SETTINGS:
        if field in changes and (problem := _text_problem(changes[field], Project._meta.get_field(field))):
            errors[field] = problem
    if "name" in changes and "name" not in errors and not changes["name"].strip():
        errors["name"] = "A project needs a name."
    if changes.get("llm_base_url"):
        try:
            check_llm_base_url(str(changes["llm_base_url"]), allow_private=settings.LLM_ALLOW_PRIVATE_URLS)
        except LLMURLRefused as refused:
            errors["llm_base_url"] = str(refused)


def _check_weight_coefficients(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    if not any(f in changes for f in _COEFFICIENTS) or any(f in errors for f in _COEFFICIENTS):
        return
    total = sum(float(changes.get(f, getattr(project, f))) for f in _COEFFICIENTS)
    if abs(total - 1.0) > 1e-6:
        errors["weight_consistency"] = f"The three weight coefficients must sum to 1 (they sum to {total:.4g})."


def _check_fixed_once_labelling_started(project: Project, changes: dict[str, Any], errors: Errors) -> None:
    def changed(field: str) -> bool:
        return field in changes and changes[field] != getattr(project, field)

    if project.pk and project.labelling_started_at is not None:
        if changed("blind_rate"):
            errors["blind_rate"] = (
                "Labelling has started: the blind rate of existing items cannot change, because a suggestion "
                "that was seen cannot be unseen. Items imported later get their own draws."
            )
        if changed("minimum_blind_sample"):
            errors["minimum_blind_sample"] = "Labelling has started: the blind sample of existing items is fixed."
        if changed("mode"):
            errors["mode"] = "Labelling has started: the mode cannot change (create a new project to compare modes)."
    if (
        project.pk
        and changed("verify_visibility")
        # Read through the reverse relation: the requests live in annotation, a floor above this one.
        and project.label_requests.filter(kind="verification", status="answered").exists()
    ):
        errors["verify_visibility"] = (
            "Verification requests have been answered: whether they showed the model's answer is fixed, or the "
            "answers given before and after would mean different things."
        )


@transaction.atomic
def project_create(
    *,
    name: str,
    lead: AbstractBaseUser | None = None,
    criteria: Sequence[tuple[str, float]] = (("overall", 1.0),),
    criterion_descriptions: Mapping[str, str] | None = None,
    seed: int | None = None,
    **project_settings: Any,
) -> Project:
    project = Project(
        name=name.strip(), slug=_unique_slug(name), seed=secrets.randbelow(2**31) if seed is None else seed
    )
    check_project_settings(project=project, changes={"name": name, **project_settings})
    for field, field_value in project_settings.items():
        setattr(project, field, field_value)
    project.save()
    criteria_set(project=project, criteria=criteria, descriptions=criterion_descriptions)
    if lead is not None:
        membership_set(project=project, user=lead, role=Membership.Role.LEAD)
    return project


@transaction.atomic
def project_update(*, project: Project, changes: dict[str, Any]) -> Project:
    project = Project.objects.select_for_update().get(pk=project.pk)
    check_project_settings(project=project, changes=changes)
    changed = {field for field, field_value in changes.items() if field_value != getattr(project, field)}
    for field, field_value in changes.items():
        setattr(project, field, field_value)
    figures_changed = bool(changed & FIGURE_SETTINGS)
    if figures_changed:
        project.settings_version += 1
    project.save()
    if changed & {"blind_rate", "minimum_blind_sample"}:
        blind_sample_redraw(project=project)
    if figures_changed:
        events.settings_changed(project_id=project.pk)
    return project


def check_criteria(criteria: Sequence[tuple[str, float]], descriptions: Mapping[str, str] | None = None) -> None:
    for name, text in (descriptions or {}).items():
        if problem := _text_problem(text, Criterion._meta.get_field("description")):
            raise ValidationError({"criteria": f"{name}: {problem}"})
    if not criteria:
        raise ValidationError({"criteria": "A project needs at least one criterion."})
    names = [name.strip() for name, _ in criteria]
    if any(not name for name in names):
        raise ValidationError({"criteria": "Every criterion needs a name."})
    if len(set(names)) != len(names):
        raise ValidationError({"criteria": "Criterion names must be different."})
    weights = [float(weight) for _, weight in criteria]
    if any(not math.isfinite(w) or w < 0 for w in weights):
        raise ValidationError({"criteria": "Criterion weights must be numbers ≥ 0."})
    if abs(sum(weights) - 1.0) > 1e-6:
        raise ValidationError({"criteria": f"Criterion weights must sum to 1 (they sum to {sum(weights):.4g})."})


@transaction.atomic
def criteria_set(
    *, project: Project, criteria: Sequence[tuple[str, float]], descriptions: Mapping[str, str] | None = None
) -> list[Criterion]:
    """Set a project's criteria; once they exist, any change of names or weights is a figure-relevant setting
    change (settings_version bumped, recompute scheduled), like project_update's FIGURE_SETTINGS. ``descriptions``
    (by criterion name) tell annotators what a criterion means; a name left out keeps its description."""
    check_criteria(criteria, descriptions)
    before = list(project.criteria.order_by("position", "id").values_list("name", "weight"))
    wanted = [(name.strip(), float(weight)) for name, weight in criteria]
    if project.labelling_started_at is not None:
        if sorted(name for name, _ in before) != sorted(name for name, _ in wanted):
            raise ValidationError({"criteria": "Labelling has started: criteria can be re-weighted, not renamed."})
        for position, (name, weight) in enumerate(wanted):
            project.criteria.filter(name=name).update(weight=weight, position=position)
    else:
        kept = dict(project.criteria.values_list("name", "description"))
        project.criteria.all().delete()
        for position, (name, weight) in enumerate(wanted):
            Criterion.objects.create(
                project=project, name=name, weight=weight, position=position, description=kept.get(name, "")
            )
    for name, text in (descriptions or {}).items():
        project.criteria.filter(name=name.strip()).update(description=text.strip())
    result = list(project.criteria.all())
    # QuerySet.update() and bulk deletes send no per-row signal: forget the cached criteria here too.
    criteria_forget(project_id=project.pk)
    # A project's first criteria (at creation) change no figure; only a change of existing ones does.
    if before and sorted(before) != sorted(wanted):
        Project.objects.filter(pk=project.pk).update(settings_version=F("settings_version") + 1)
        project.refresh_from_db(fields=["settings_version"])
        events.settings_changed(project_id=project.pk)
    return result


@transaction.atomic
def membership_set(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise ValidationError({"role": f"Expected one of {', '.join(Membership.Role.values)}."})
    if ImportedAnnotator.objects.filter(user_id=user.pk).exists():
        # A shadow of an imported name is nobody: making it a member (and inviting it) would give it a login.
        raise ValidationError({"username": "This is an imported annotator's placeholder, not a person's account."})
    membership, _ = Membership.objects.update_or_create(project=project, user_id=user.pk, defaults={"role": role})
    return membership


@transaction.atomic
def member_invite(*, project: Project, username: str, role: str) -> AbstractBaseUser:
    """Make ``username`` a member with ``role``, creating the account without a password if it does not exist yet
    (the person sets one through an invitation link: see the member_add command)."""
    username = username.strip()
    if not username:
        raise ValidationError({"username": "A username is needed."})
    user, created = get_user_model().objects.get_or_create(username=username[:150])
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    membership_set(project=project, user=user, role=role)
    return user


@transaction.atomic
def blind_sample_redraw(*, project: Project) -> None:
    """Draw the whole blind sample again (projects.blind's rule, as set-based UPDATEs).

    Only before labelling starts: afterwards draws are frozen.
    """
    if project.labelling_started_at is not None:
        raise ValidationError({"blind_rate": "Labelling has started: the blind sample is fixed."})
    items = Item.objects.filter(project=project)
    total = items.count()
    rate, minimum = project.blind_rate, project.minimum_blind_sample
    by_rate = items.filter(blind_draw__lt=rate).count()
    if by_rate >= minimum or total == 0:
        items.update(
            is_blind=Case(When(blind_draw__lt=rate, then=Value(True)), default=Value(False)),
            blind_inclusion_probability=Case(When(blind_draw__lt=rate, then=Value(rate)), default=None),
        )
        return
    wanted = min(minimum, total)
    # Every item had the same chance of being among the ``wanted`` smallest draws of ``total``.
    smallest = list(items.order_by("blind_draw", "id").values_list("blind_draw", "id")[wanted - 1 : wanted])
    cut_draw, cut_id = smallest[0]
    chosen = Q(blind_draw__lt=cut_draw) | Q(blind_draw=cut_draw, id__lte=cut_id)
    items.update(
        is_blind=Case(When(chosen, then=Value(True)), default=Value(False)),
        blind_inclusion_probability=Case(When(chosen, then=Value(wanted / total)), default=None),
    )


def blind_sample_assign_new(*, project: Project, items: Sequence[Item]) -> None:
    """Set blind flags on ``items`` (unsaved or just saved) as docs/DESIGN.md's fixed-sample rule says."""
    if project.labelling_started_at is None:
        # Nothing is seen yet: the sample over all items is drawn afresh by the caller (blind_sample_redraw).
        return
    existing = Item.objects.filter(project=project).exclude(pk__in=[i.pk for i in items if i.pk])
    choice = blind.choose_blind_for_new_items(
        draws=[item.blind_draw for item in items],
        blind_rate=project.blind_rate,
        minimum=project.minimum_blind_sample,
        existing_blind=existing.filter(is_blind=True).count(),
        existing_total=existing.count(),
    )
    for item, flag in zip(items, choice.is_blind, strict=True):
        item.is_blind = flag
        item.blind_inclusion_probability = choice.inclusion_probability if flag else None


@transaction.atomic
def project_mark_labelling_started(*, project_id: int) -> None:
    """Called by the first save of an annotation; freezes the blind sample of existing items."""
    Project.objects.filter(pk=project_id, labelling_started_at__isnull=True).update(labelling_started_at=timezone.now())
