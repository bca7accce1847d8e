"""The IFS presets: the common states of a judgment of one response, one key each on the annotation page.

Annotators mostly land on a few states per response: it clearly meets the criterion, it leans that way, they cannot
tell, it leans towards failing it, it clearly fails. A preset sets μ and ν together (static/js/ifs_input.js), so a
two-response item costs one key per response and S. Presets leave some hesitation on purpose: even a "strong" judgment
keeps 10 %, and "unsure" is mostly hesitation with a little evidence each way, which is what the sliders were for.
Keys run from 1 (opposition, the triangle's left corner) to 5 (support, its right corner), as they are drawn left to
right. The names avoid "again" (in "against"): a repeat must carry no word that could tell the annotator it is one.
Values are per-mille, as stored.
"""

from __future__ import annotations

from typing import NamedTuple

from django.utils.translation import gettext_noop


class Preset(NamedTuple):
    key: str
    name: str
    mu: int
    nu: int

    @property
    def pi(self) -> int:
        return 1000 - self.mu - self.nu


IFS_PRESETS: tuple[Preset, ...] = (
    Preset("1", gettext_noop("strong opposition"), 0, 900),
    Preset("2", gettext_noop("some opposition"), 100, 600),
    Preset("3", gettext_noop("unsure"), 200, 200),
    Preset("4", gettext_noop("some support"), 600, 100),
    Preset("5", gettext_noop("strong support"), 900, 0),
)


def presets_attribute() -> str:
    """The presets as the page's script reads them: ``key:mu:nu`` separated by spaces."""
    return " ".join(f"{p.key}:{p.mu}:{p.nu}" for p in IFS_PRESETS)
