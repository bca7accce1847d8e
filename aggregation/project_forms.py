"""Forms of the new-project page and the people page. They only parse input; the rules live in projects.services
(check_project_settings, check_criteria) and projects.people."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from config.input_limits import TextRuleForm
from projects.models import Membership, Project
from projects.services import EDITABLE_SETTINGS

_NUMBER = {"step": "any", "inputmode": "decimal"}

# The settings the new-project page sets; every other one keeps its default (or the copied project's value).
CREATE_SECTIONS: tuple[tuple[Any, tuple[str, ...]], ...] = (
    (_("Project"), ("name", "description")),
    (_("How annotators judge"), ("mode", "likert_points", "tie_tolerance")),
    (_("How many labels"), ("overlap",)),
    (_("LLM suggestions and the blind sample"), ("suggestion_display", "blind_rate", "minimum_blind_sample")),
    (
        _("Handoff to the LLM"),
        ("handoff_rule", "handoff_agreement_threshold", "handoff_minimum_blind_comparisons"),
    ),
)
CREATE_SETTINGS = (*(name for _title, names in CREATE_SECTIONS for name in names), "guidelines")
# Settings a copy takes from its source besides the ones on the page: every other editable one but a person (the
# adaptive expert) and the API key; never the name either, nor anyone's membership.
NOT_COPIED = ("adaptive_expert_id", "llm_api_key")
COPIED_SETTINGS = (
    "guidelines",
    *(name for name in EDITABLE_SETTINGS if name not in CREATE_SETTINGS and name not in NOT_COPIED),
)


def _modes() -> list[tuple[str, Any]]:
    # A crossover method study is set up on its own page, after the project exists.
    return [(value, label) for value, label in Project.Mode.choices if value != Project.Mode.CROSSOVER]


class ProjectCreateForm(TextRuleForm):
    name = forms.CharField(label=_("Name"), max_length=200, help_text=_("What leads and annotators see in lists."))
    description = forms.CharField(
        label=_("Description"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("For the leads: what the data is for. Annotators do not see it."),
    )
    mode = forms.ChoiceField(
        label=_("Labelling mode"),
        choices=_modes,
        initial=Project.Mode.IFS,
        help_text=_(
            "IFS: two sliders per response, support and opposition; what is left is hesitation, kept in the data. "
            "Binary: A, B or tie. Likert: one point on a side-by-side scale. Fixed once labelling starts."
        ),
    )
    likert_points = forms.TypedChoiceField(
        label=_("Likert points"),
        coerce=int,
        choices=[(k, str(k)) for k in (3, 5, 7, 9, 11)],
        initial=7,
        help_text=_("Likert mode only: an odd number, so the middle point means no preference."),
    )
    tie_tolerance = forms.FloatField(
        label=_("Tie tolerance"),
        initial=0.1,
        min_value=0,
        max_value=2,
        widget=forms.NumberInput(attrs=_NUMBER),
        help_text=_("Two responses whose scores differ by less than this count as a tie in agreement and exports."),
    )
    overlap = forms.IntegerField(
        label=_("Labels per item"),
        initial=3,
        min_value=1,
        max_value=100,
        help_text=_("How many different annotators label each item. Agreement needs at least 2; 3 is usual."),
    )
    suggestion_display = forms.ChoiceField(
        label=_("When annotators see the LLM's suggestion"),
        choices=Project.SuggestionDisplay.choices,
        initial=Project.SuggestionDisplay.BLIND_SAMPLE,
        help_text=_(
            "Before labelling is fastest but anchors people. After labelling shows it as a second step. Blind sample "
            "never shows it on the blind items, so the LLM's agreement with people is measured without anchoring."
        ),
    )
    blind_rate = forms.FloatField(
        label=_("Blind rate"),
        initial=0.2,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs=_NUMBER),
        help_text=_(
            "Share of items drawn at random whose suggestion is never shown first: the LLM is measured on them. "
            "Fixed for existing items once labelling starts."
        ),
    )
    minimum_blind_sample = forms.IntegerField(
        label=_("Blind items at least"),
        initial=20,
        min_value=0,
        help_text=_("Fewer items than this by the rate: this many are drawn instead (all items if there are fewer)."),
    )
    handoff_rule = forms.ChoiceField(
        label=_("Handoff rule"),
        choices=Project.HandoffRule.choices,
        initial=Project.HandoffRule.POINT,
        help_text=_(
            # xgettext:no-python-format (the "95 %" is not a placeholder; msgfmt rejects translations otherwise)
            "When the remaining items may go to the LLM: its agreement with people on the blind sample, or the lower "
            "end of that agreement's 95 % interval (stricter with few blind items)."
        ),
    )
    handoff_agreement_threshold = forms.FloatField(
        label=_("Agreement needed"),
        initial=0.9,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs=_NUMBER),
        help_text=_("0 to 1: the share of blind items where the LLM and people prefer the same response."),
    )
    handoff_minimum_blind_comparisons = forms.IntegerField(
        label=_("Blind comparisons at least"),
        initial=20,
        min_value=1,
        help_text=_("No handoff is offered before this many blind items have both a label and a suggestion."),
    )
    guidelines = forms.CharField(
        label=_("Guidelines"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "dir": "auto"}),
        help_text=_("Shown to annotators above every item. Markdown: **bold**, lists, links; no HTML."),
    )
    copy_from = forms.TypedChoiceField(
        label=_("Copy the settings of"),
        required=False,
        coerce=int,
        empty_value=None,
        help_text=_(
            "A project you lead: its settings, criteria and guidelines fill this form (not its items, people or "
            "API key). Choose it first, then adjust."
        ),
    )

    def __init__(self, *args: Any, sources: list[Project], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        copy_from = self.fields["copy_from"]
        assert isinstance(copy_from, forms.TypedChoiceField)
        copy_from.choices = [("", _("Nothing: start from the defaults"))] + [(p.pk, p.name) for p in sources]

    def sections(self) -> list[tuple[Any, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in CREATE_SECTIONS]

    def settings(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in CREATE_SETTINGS if name in self.cleaned_data}


class CriterionForm(TextRuleForm):
    name = forms.CharField(label=_("Criterion"), max_length=100)
    weight = forms.FloatField(label=_("Weight"), min_value=0, max_value=1, widget=forms.NumberInput(attrs=_NUMBER))
    description = forms.CharField(
        label=_("What it means"), required=False, widget=forms.Textarea(attrs={"rows": 2, "dir": "auto"})
    )


class CriteriaFormSet(forms.BaseFormSet):
    def criteria(self) -> tuple[list[tuple[str, float]], dict[str, str]]:
        """(name, weight) pairs and descriptions by name, rows marked for removal and blank extra rows left out."""
        rows = [f.cleaned_data for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        pairs = [(row["name"].strip(), row["weight"]) for row in rows]
        return pairs, {row["name"].strip(): row.get("description", "") for row in rows}


CriteriaFormSetFactory = forms.formset_factory(
    CriterionForm, formset=CriteriaFormSet, extra=0, can_delete=True, min_num=1, validate_min=True, max_num=20
)


class InviteForm(TextRuleForm):
    address = forms.CharField(
        label=_("Username or e-mail"),
        max_length=254,
        help_text=_("Someone with an account joins at once; anyone else gets an invitation link to choose a password."),
    )
    role = forms.ChoiceField(
        label=_("Role"),
        choices=Membership.Role.choices,
        initial=Membership.Role.ANNOTATOR,
        help_text=_("Annotators label items. Leads see every figure, change settings and invite people."),
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Membership.Role.choices)


class DeleteForm(TextRuleForm):
    confirmation = forms.CharField(label=_("Type the project's name to confirm"), max_length=200)
