from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from projects.webhooks.models import EVENTS


class WebhookForm(forms.Form):
    url = forms.URLField(label=_("Receiver URL"), max_length=500, assume_scheme="https")
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=EVENTS,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Labels saved are sent in batches, after the figures are recomputed."),
    )
