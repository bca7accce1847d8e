"""The project settings that figures are computed from, as a plain object.

The per-item and per-annotator maths read these instead of a ``Project`` row, so a notebook can build one by hand
(``FigureSettings(project_id=0, likert_points=5)``) and run :mod:`aggregation.figures.items` on its own arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FigureSettings:
    project_id: int = 0
    mode: str = "ifs"
    likert_points: int = 7
    tie_tolerance: float = 0.1
    aggregation_operator: str = "weighted_mean"
    settings_version: int = 0
    seed: int = 0
    overlap: int = 3
    weight_consistency: float = 1.0 / 3.0
    weight_expertise: float = 1.0 / 3.0
    weight_agreement: float = 1.0 / 3.0

    @classmethod
    def of(cls, project: Any) -> FigureSettings:
        """Copy the figure-relevant settings of a project row (or anything with the same attributes)."""
        return cls(
            project_id=int(project.pk),
            mode=str(project.mode),
            likert_points=int(project.likert_points),
            tie_tolerance=float(project.tie_tolerance),
            aggregation_operator=str(project.aggregation_operator),
            settings_version=int(project.settings_version),
            seed=int(project.seed),
            overlap=int(project.overlap),
            weight_consistency=float(project.weight_consistency),
            weight_expertise=float(project.weight_expertise),
            weight_agreement=float(project.weight_agreement),
        )
