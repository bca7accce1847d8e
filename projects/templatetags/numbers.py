"""One helper for counts and numbers on every page: ``{{ n|count_noun:"item" }}`` → "1 item" / "3 items",
``{{ n|count_noun:"person,people" }}`` → "1 person" / "2 people", ``{{ n|agree:"has,have" }}`` for the verb that
follows a count, and ``{{ x|number }}`` → at most 4 significant digits (0.3333, 12.5, 1,204), never
0.3333333333333333. In projects (the lowest app) so every app's templates can load it: ``{% load numbers %}``.

In other languages a counted noun comes from the translation catalog (``COUNTED``: one entry per noun, with that
language's plural forms, which English's "+s" cannot give); numbers are grouped the reader's way. A noun not listed
stays English, so a new one shows up in the pseudo-locale test rather than breaking a page.
"""

from __future__ import annotations

import math
from typing import Any

from django import template
from django.utils import formats
from django.utils.translation import get_language, ngettext_lazy

register = template.Library()

#: Plurals that are not the singular + "s"; a template may also pass "singular,plural" itself.
IRREGULAR = {"person": "people", "criterion": "criteria", "this": "these", "has": "have", "is": "are", "was": "were"}


#: Counted nouns as whole phrases, so each language places the number and picks the plural form its own way.
COUNTED = {
    "item": ngettext_lazy("%(count)s item", "%(count)s items", "n"),
    "label": ngettext_lazy("%(count)s label", "%(count)s labels", "n"),
    "annotator": ngettext_lazy("%(count)s annotator", "%(count)s annotators", "n"),
    "comparison": ngettext_lazy("%(count)s comparison", "%(count)s comparisons", "n"),
    "judgment": ngettext_lazy("%(count)s judgment", "%(count)s judgments", "n"),
    "line": ngettext_lazy("%(count)s line", "%(count)s lines", "n"),
    "minute": ngettext_lazy("%(count)s minute", "%(count)s minutes", "n"),
    "pair": ngettext_lazy("%(count)s pair", "%(count)s pairs", "n"),
    "person": ngettext_lazy("%(count)s person", "%(count)s people", "n"),
}


def _grouped(whole: int) -> str:
    # English keeps the exact "1,204" the pages always showed; other languages group their own way.
    if (get_language() or "en").startswith("en"):
        return f"{whole:,}"
    return formats.number_format(whole, use_l10n=True, force_grouping=True)


def _whole(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _forms(noun: str) -> tuple[str, str]:
    singular, _, plural = noun.partition(",")
    return singular, plural or IRREGULAR.get(singular) or (
        singular[:-1] + "ies" if singular.endswith("y") and singular[-2:-1] not in "aeiou" else singular + "s"
    )


@register.filter
def noun(value: Any, forms: str) -> str:
    """The noun alone, in the form that goes with ``value`` (1 → singular, anything else → plural)."""
    singular, plural = _forms(forms)
    return singular if _whole(value) == 1 else plural


@register.filter
def count_noun(value: Any, forms: str) -> str:
    """``value`` and the noun in agreement: "1 item", "0 items", "1,204 items"; a missing count reads "no"."""
    whole = _whole(value)
    if whole is None:
        return f"{number(value)} {_forms(forms)[1]}" if value not in (None, "") else f"no {_forms(forms)[1]}"
    counted = COUNTED.get(forms.partition(",")[0])
    if counted is not None:
        return str(counted % {"n": whole, "count": _grouped(whole)})
    return f"{_grouped(whole)} {noun(whole, forms)}"


@register.filter
def agree(value: Any, forms: str) -> str:
    """The verb after a count: ``{{ n|agree:"has,have" }}``; ``forms`` is "singular,plural"."""
    return noun(value, forms)


@register.filter
def number(value: Any, digits: int = 4) -> str:
    """A figure as people read it: whole numbers with thousands separators, others to ``digits`` significant
    digits without trailing zeros; None, NaN and text that is not a number read "—"."""
    if value is None or isinstance(value, bool):
        return "—"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "—"
    if not math.isfinite(x):
        return "—"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    text = f"{x:,.{int(digits)}g}" if abs(x) >= 1 else f"{x:.{int(digits)}g}"
    if "e" in text:
        return f"{x:.{int(digits)}g}"
    return text
