"""The import page's form. It only parses input; the rules live in projects.imports.tasks (check_import_job)."""

from __future__ import annotations

from typing import Any

from django import forms

from projects.formats import FORMATS
from projects.formats.common import RESPONSE_STATUSES
from projects.imports.items import DUPLICATE_POLICIES, TRL_CHOSEN_AS
from projects.imports.preview import AUTO
from projects.models import Job

FORMAT_NAMES = {
    AUTO: "Detect from the file",
    "native": "Penumbra's own JSON Lines",
    "label-studio": "Label Studio (JSON export)",
    "potato": "Potato",
    "argilla": "Argilla 2 (records.to_json)",
    "hf": "Hugging Face dataset (JSON Lines or Parquet)",
}


# The reading options of projects.formats.Options, under the API's names; the rules live there (options_parse).
READING_OPTIONS = ("ratings_rule", "scheme", "statuses", "scale", "items_key")


class ImportForm(forms.Form):
    kind = forms.ChoiceField(
        label="What the file holds",
        choices=[(Job.Kind.IMPORT_ITEMS, "Items (prompts and responses)"), (Job.Kind.IMPORT_LABELS, "Existing labels")],
        initial=Job.Kind.IMPORT_ITEMS,
        widget=forms.RadioSelect,
    )
    file = forms.FileField(label="File", help_text="Drop it here or choose it; nothing is written before you confirm.")
    format = forms.ChoiceField(
        label="Format", choices=[(name, FORMAT_NAMES.get(name, name)) for name in (AUTO, *FORMATS)], initial=AUTO
    )
    skip_invalid = forms.BooleanField(
        label="Skip bad records (import the rest)", required=False, help_text="Otherwise one bad record stops all."
    )
    on_duplicate = forms.ChoiceField(
        label="Items already in the project",
        choices=[(p, p) for p in DUPLICATE_POLICIES],
        initial="reject",
        help_text="Items only: reject, skip or update items whose id is already here.",
    )
    trl_chosen_as = forms.ChoiceField(
        label="TRL's chosen answer becomes",
        choices=[(c, c) for c in TRL_CHOSEN_AS],
        initial="gold",
        help_text="Items only, for prompt/chosen/rejected rows.",
    )
    allow_members = forms.BooleanField(
        label="Names may be this project's annotators",
        required=False,
        help_text="Labels only: a name that is an annotator's username files under them.",
    )
    allow_leads = forms.BooleanField(
        label="Names may be this project's leads", required=False, help_text="Labels only, as above for leads."
    )
    ratings_rule = forms.ChoiceField(
        label="One rating per response becomes",
        required=False,
        choices=[("", "the converter's default"), ("binary", "a choice of the higher-rated response"),
                 ("likert", "a Likert point from the difference"), ("refuse", "an error (refuse such records)")],
        help_text="Other tools' files that rate each response on its own.",
    )  # fmt: skip
    scheme = forms.CharField(
        label="Annotation scheme", required=False, max_length=200, help_text="For a file with several: which to read."
    )
    statuses = forms.MultipleChoiceField(
        label="Argilla responses that count",
        required=False,
        choices=[(status, status) for status in RESPONSE_STATUSES],
        widget=forms.CheckboxSelectMultiple,
        help_text="Argilla only; none ticked: submitted. Files from records.to_json do not say: tick unknown.",
    )
    scale = forms.CharField(
        label="Pairwise scale",
        required=False,
        max_length=20,
        help_text="Potato only: the lowest and highest point, as min..max (e.g. 1..6 or -3..3).",
    )
    items_key = forms.CharField(
        label="Key holding the responses",
        required=False,
        max_length=200,
        help_text="Potato only: the data key with the responses, when it is not the usual one.",
    )

    def job_options(self) -> dict[str, Any]:
        """The options of a dry run of this file, as the API takes them."""
        data = self.cleaned_data
        options: dict[str, Any] = {"format": data["format"], "skip_invalid": data["skip_invalid"], "dry_run": True}
        # The reading options by name, as the API takes them (projects.formats.Options).
        options.update({name: data[name] for name in READING_OPTIONS if data.get(name)})
        if data["kind"] == Job.Kind.IMPORT_ITEMS:
            options.update(on_duplicate=data["on_duplicate"], trl_chosen_as=data["trl_chosen_as"])
        else:
            options.update(allow_members=data["allow_members"], allow_leads=data["allow_leads"])
        return options


class LinkForm(forms.Form):
    member = forms.IntegerField(label="Member", min_value=1)
