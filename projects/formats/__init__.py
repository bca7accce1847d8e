"""Converters from other annotation tools' files to Penumbra's native item and label rows (pure: no Django).

Each tool has its module with ``items(handle)`` and ``labels(handle, mode=…, likert_points=…)``; the import services
take the rows they return (projects.imports.formats runs them). ``native`` means the file is already in Penumbra's own
JSON Lines and goes to the import services untouched.
"""

from __future__ import annotations

from typing import IO

from projects.formats import argilla, hf, label_studio, potato
from projects.formats.common import Converted, Source

NATIVE = "native"
FORMATS = (NATIVE, "label-studio", "potato", "argilla", "hf")
_MODULES = {"label-studio": label_studio, "potato": potato, "argilla": argilla}

__all__ = ["FORMATS", "NATIVE", "Converted", "Source", "convert_items", "convert_labels"]


def convert_items(fmt: str, handle: IO[bytes]) -> Converted:
    if fmt == "hf":
        return hf.items(handle)
    return _MODULES[fmt].items(handle)


def convert_labels(fmt: str, handle: IO[bytes], *, mode: str, likert_points: int, seed: int) -> Converted:
    if fmt == "hf":
        return hf.labels(handle, mode=mode, likert_points=likert_points, seed=seed)
    return _MODULES[fmt].labels(handle, mode=mode, likert_points=likert_points)
