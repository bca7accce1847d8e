"""Converters from other annotation tools' files to Penumbra's native item and label rows (pure: no Django).

Each tool has its module with ``items(handle, options=…)`` and ``labels(handle, mode=…, likert_points=…,
options=…)``; the import services take the rows they return (projects.imports.formats runs them). ``native`` means
the file is already in Penumbra's own JSON Lines and goes to the import services untouched. ``Options`` carries the
lead's choices (scheme, ratings rule, Argilla statuses, Potato's items key and scale); ``options_from`` reads them
from a request or a job and names any bad one.
"""

from __future__ import annotations

from typing import IO

from projects.formats import argilla, hf, label_studio, potato
from projects.formats.common import (
    OPTION_NAMES,
    RATINGS_RULES,
    RESPONSE_STATUSES,
    Converted,
    Options,
    OptionsInvalid,
    Source,
    options_from,
)

NATIVE = "native"
FORMATS = (NATIVE, "label-studio", "potato", "argilla", "hf")
_MODULES = {"label-studio": label_studio, "potato": potato, "argilla": argilla}

__all__ = [
    "FORMATS",
    "NATIVE",
    "OPTION_NAMES",
    "RATINGS_RULES",
    "RESPONSE_STATUSES",
    "Converted",
    "Options",
    "OptionsInvalid",
    "Source",
    "convert_items",
    "convert_labels",
    "options_from",
]


def convert_items(
    fmt: str, handle: IO[bytes], *, options: Options | None = None, seed: int = 0, trl_chosen_as: str = "gold"
) -> Converted:
    """``seed`` and ``trl_chosen_as`` matter to preference datasets only: where the chosen answer is put, and
    whether the preference becomes gold, the suggestion or nothing."""
    options = options or Options()
    if fmt == "hf":
        return hf.items(handle, options=options, seed=seed, chosen_as=trl_chosen_as)
    return _MODULES[fmt].items(handle, options=options)


def convert_labels(
    fmt: str, handle: IO[bytes], *, mode: str, likert_points: int, seed: int, options: Options | None = None
) -> Converted:
    options = options or Options()
    if fmt == "hf":
        return hf.labels(handle, mode=mode, likert_points=likert_points, seed=seed, options=options)
    return _MODULES[fmt].labels(handle, mode=mode, likert_points=likert_points, options=options)
