"""Forms for the lead's settings page. They only parse input; the rules live in projects.services (check_*)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from config.input_limits import TextRuleForm
from projects.models import Criterion, Membership, Project

# Field groups as the settings page shows them; every name is one of projects.services.EDITABLE_SETTINGS.
SETTINGS_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Project", ("name", "description", "guidelines")),
    ("Labelling", ("mode", "likert_points", "overlap", "tie_tolerance")),
    (
        "Suggestions and the blind sample",
        ("suggestion_display", "blind_rate", "minimum_blind_sample", "verify_visibility"),
    ),
    (
        "Handoff to the LLM",
        ("handoff_rule", "handoff_trigger", "handoff_agreement_threshold", "handoff_minimum_blind_comparisons"),
    ),
    ("Aggregation", ("aggregation_operator", "weight_consistency", "weight_expertise", "weight_agreement")),
    ("Repeats", ("repeat_rate", "repeat_delay_items", "repeat_delay_minutes")),
    (
        "Adaptive overlap",
        ("adaptive_cap", "adaptive_budget", "adaptive_hesitation", "adaptive_dispute", "adaptive_expert_id"),
    ),
    ("LLM endpoint", ("llm_base_url", "llm_model", "llm_api_key", "llm_instruction_template")),
)

_NUMBER = {"step": "any", "inputmode": "decimal"}


class ShownFloatField(forms.FloatField):
    """A float shown to 4 significant digits (1/3 reads 0.3333, not 0.3333333333333333). Sent back untouched, the
    shown figure means the stored value: ``ProjectSettingsForm.clean`` restores it, so the weights' sum to 1 holds."""

    def prepare_value(self, value: Any) -> Any:
        return shown_float(value)


def shown_float(value: Any) -> Any:
    return f"{value:.4g}" if isinstance(value, float) else value


class ProjectSettingsForm(TextRuleForm):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    guidelines = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="Shown above every item (markdown)."
    )
    mode = forms.ChoiceField(choices=Project.Mode.choices)
    likert_points = forms.IntegerField(help_text="Odd, 3 to 11 (Likert mode).")
    overlap = forms.IntegerField(help_text="Annotations wanted per item.")
    tie_tolerance = forms.FloatField(
        widget=forms.NumberInput(attrs=_NUMBER), help_text="Scores closer than this count as a tie."
    )
    suggestion_display = forms.ChoiceField(choices=Project.SuggestionDisplay.choices)
    blind_rate = forms.FloatField(
        widget=forms.NumberInput(attrs=_NUMBER), help_text="Share of items that never show their suggestion first."
    )
    minimum_blind_sample = forms.IntegerField()
    verify_visibility = forms.ChoiceField(
        choices=Project.VerifyVisibility.choices,
        help_text="Fixed once verification requests have been answered.",
    )
    handoff_rule = forms.ChoiceField(choices=Project.HandoffRule.choices)
    handoff_trigger = forms.ChoiceField(choices=Project.HandoffTrigger.choices)
    handoff_agreement_threshold = ShownFloatField(widget=forms.NumberInput(attrs=_NUMBER))
    handoff_minimum_blind_comparisons = forms.IntegerField()
    aggregation_operator = forms.ChoiceField(choices=Project.Operator.choices)
    weight_consistency = ShownFloatField(widget=forms.NumberInput(attrs=_NUMBER), help_text="α in Eq. 8.")
    weight_expertise = ShownFloatField(widget=forms.NumberInput(attrs=_NUMBER), help_text="β in Eq. 8.")
    weight_agreement = ShownFloatField(widget=forms.NumberInput(attrs=_NUMBER), help_text="γ in Eq. 8; α + β + γ = 1.")
    repeat_rate = forms.FloatField(
        widget=forms.NumberInput(attrs=_NUMBER),
        help_text="Share of each annotator's items shown to them again, unannounced (0 to 0.5; 0: no repeats).",
    )
    repeat_delay_items = forms.IntegerField(help_text="At least this many other items in between.")
    repeat_delay_minutes = forms.IntegerField(help_text="And at least this many minutes.")
    adaptive_cap = forms.IntegerField(
        label="Extra labels per item", help_text="For hesitant or disputed items, at most; 0 turns it off."
    )
    adaptive_budget = forms.IntegerField(label="Extra labels in all", help_text="0 turns adaptive overlap off.")
    adaptive_hesitation = forms.FloatField(
        label="Hesitant from π", widget=forms.NumberInput(attrs=_NUMBER), help_text="Mean hesitation, 0 to 1."
    )
    adaptive_dispute = forms.FloatField(
        label="Disputed below agreement", widget=forms.NumberInput(attrs=_NUMBER), help_text="0 to 1."
    )
    adaptive_expert_id = forms.TypedChoiceField(
        label="Expert", required=False, coerce=int, empty_value=None, help_text="Extra labels go to this person alone."
    )
    llm_base_url = forms.CharField(
        label="LLM base URL", required=False, max_length=300, help_text="OpenAI-compatible endpoint."
    )
    llm_model = forms.CharField(label="LLM model", required=False, max_length=200)
    llm_api_key = forms.CharField(
        label="API key",
        required=False,
        max_length=300,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Write-only: leave empty to keep the stored key.",
    )
    llm_instruction_template = forms.CharField(
        label="Instruction template", required=False, widget=forms.Textarea(attrs={"rows": 3})
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name, field in self.fields.items():
            stored = self.initial.get(name)
            shown_back = isinstance(field, ShownFloatField) and isinstance(stored, float) and name in cleaned
            if shown_back and cleaned[name] == float(shown_float(stored)):
                cleaned[name] = stored  # the figure as shown, sent back: the stored value, not a rounded one
        return cleaned

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        kwargs["initial"] = {name: getattr(project, name) for name in self.base_fields if name != "llm_api_key"}
        super().__init__(*args, **kwargs)
        self.project = project
        members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
        expert = self.fields["adaptive_expert_id"]
        assert isinstance(expert, forms.TypedChoiceField)
        expert.choices = [("", "Anyone in the queue")] + [(m.user_id, m.user.get_username()) for m in members]
        consistency = self.fields["weight_consistency"]
        if project.repeat_rate <= 0:
            consistency.help_text = (
                "α in Eq. 8. Not used: the repeat rate is 0, so no item comes back to its annotator and consistency "
                "has no data; Eq. 8 is renormalised over β and γ. Set a repeat rate below to use it."
            )
        elif not project.repeats.filter(answered_at__isnull=False).exists():
            consistency.help_text = "α in Eq. 8. Not used yet: no repeat has been answered."
        if project.labelling_started_at is not None:
            for name in ("blind_rate", "minimum_blind_sample", "mode"):
                self.fields[name].help_text = "Locked: labelling has started."
                self.fields[name].widget.attrs["readonly"] = True

    def sections(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in SETTINGS_SECTIONS]

    def changes(self) -> dict[str, Any]:
        """Only the settings that differ from the stored project, so untouched locked fields are never re-checked."""
        changed: dict[str, Any] = {}
        for name, value in self.cleaned_data.items():
            if name == "llm_api_key" and not value:
                continue
            if value != getattr(self.project, name):
                changed[name] = value
        return changed


class CriteriaForm(TextRuleForm):
    criteria = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="One per line: name: weight. Weights sum to 1.",
    )

    @staticmethod
    def initial_text(criteria: list[Criterion]) -> str:
        return "\n".join(f"{criterion.name}: {criterion.weight:g}" for criterion in criteria)

    def clean_criteria(self) -> list[tuple[str, float]]:
        parsed: list[tuple[str, float]] = []
        for number, line in enumerate(self.cleaned_data["criteria"].splitlines(), start=1):
            if not line.strip():
                continue
            name, separator, weight = line.rpartition(":")
            if not separator:
                raise ValidationError(f"Line {number}: write it as name: weight.")
            try:
                parsed.append((name.strip(), float(weight)))
            except ValueError:
                raise ValidationError(f"Line {number}: {weight.strip()!r} is not a number.") from None
        return parsed


class MemberAddForm(TextRuleForm):
    username = forms.CharField(max_length=150, help_text="An existing account.")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.ANNOTATOR)

    def clean_username(self) -> AbstractBaseUser:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise ValidationError(f"No account is named {username!r}.")
        return user


class ExportForm(TextRuleForm):
    """The export page's choices: the same names and ranges as the export API
    (aggregation.exports.stream.ExportOptions)."""

    format = forms.ChoiceField(
        choices=[
            ("dpo", "DPO pairs (prompt, chosen, rejected)"),
            ("soft", "Soft labels p(a ≻ b)"),
            ("ifs", "IFS aggregates"),
            ("annotations", "Raw annotations"),
            ("rankings", "Rankings (three responses or more, with every implied pair)"),
            ("kto", "KTO: each response desirable or not (prompt, completion, label)"),
        ],
        initial="dpo",
    )
    min_annotators = forms.IntegerField(required=False, min_value=0, help_text="Leave items with fewer labels out.")
    min_agreement = forms.FloatField(
        required=False, min_value=0, max_value=1, widget=forms.NumberInput(attrs={"step": "0.05"}), help_text="0 to 1."
    )
    max_hesitation = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs={"step": "0.05"}),
        help_text="0 to 1; IFS only (binary and Likert items have none).",
    )
    ties = forms.ChoiceField(
        required=False,
        choices=[("", "Format default (dpo leaves ties out)"), ("exclude", "Leave ties out"), ("mark", "Keep, marked")],
    )
    provenance = forms.ChoiceField(
        required=False,
        choices=[("", "Any"), ("human", "Labelled by people"), ("model_handoff", "Handed to the LLM")],
    )

    metadata = forms.CharField(
        required=False,
        max_length=2000,
        label="Metadata columns",
        help_text="Item metadata keys, comma-separated: each becomes a column metadata_<key> (dpo, soft, ifs).",
    )

    def clean_metadata(self) -> tuple[str, ...]:
        # The keys' rule is the export's (check_export_options): the page shows its message on this field.
        return tuple(key.strip() for key in self.cleaned_data.get("metadata", "").split(",") if key.strip())

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ExportOptions: empty choices left to the export's defaults."""
        return {key: value for key, value in self.cleaned_data.items() if value not in (None, "", ())}
