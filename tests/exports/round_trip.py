"""Projects built through the imports and the aggregation engine, and what a label prefers read by response text.

A project's positions depend on how its items came in: here the first project takes native items (positions as the
file lists them) and the second the first's DPO export as a Hugging Face dataset, whose positions are drawn from its
own seed. Comparing by text is what tells a moved label from a flipped one.
"""

from __future__ import annotations

import io
import json
from typing import Any

from aggregation import services
from aggregation.exports.stream import ExportOptions, export_lines
from annotation.imports.labels import labels_import
from projects.imports.formats import items_import_formatted
from projects.imports.items import items_import
from projects.models import Item, Project
from tests.factories import ProjectFactory

N_ITEMS = 12
ANNOTATORS = ("ada", "ben", "cyd")
MODELS = ("model-left", "model-right")


def _label(mode: str, item: int, who: int) -> dict[str, Any]:
    """A label that depends on the item and the annotator, so items differ in which response they prefer."""
    if mode == Project.Mode.BINARY:
        return {"choice": (item + who) % 3 % 2}
    if mode == Project.Mode.LIKERT:
        return {"likert": 1 + (item * 2 + who) % 7}
    first = (item * 97 + who * 31) % 900 // 2 * 2  # even: half of it is a whole number of thousandths
    return {
        "values": [
            {"position": 0, "criterion": "overall", "mu": first / 1000, "nu": (900 - first) / 2000},
            {"position": 1, "criterion": "overall", "mu": (900 - first) / 1000, "nu": first / 2000},
        ]
    }


def lines_of(project: Project, export_format: str, **options: Any) -> list[str]:
    return list(export_lines(project=project, options=ExportOptions(format=export_format, **options)))


def imported_project(mode: str, *, seed: int = 11) -> Project:
    """Native items with a model per response and metadata, three imported annotators' labels, figures computed."""
    project = ProjectFactory(mode=mode, seed=seed)
    items_import(
        project=project,
        lines=[
            json.dumps(
                {
                    "id": f"item-{i}",
                    "prompt": f"Question {i}?",
                    "responses": [
                        {"text": f"Answer {i} from the left", "model": MODELS[0]},
                        {"text": f"Answer {i} from the right", "model": MODELS[1]},
                    ],
                    "metadata": {"topic": f"topic-{i % 3}", "difficulty": i},
                }
            )
            for i in range(N_ITEMS)
        ],
    )
    labels_import(
        project=project,
        lines=[
            json.dumps({"item": f"item-{i}", "annotator": name, "mode": mode, **_label(mode, i, who)})
            for i in range(N_ITEMS)
            for who, name in enumerate(ANNOTATORS)
        ],
    )
    services.item_aggregates_recompute(project_id=project.pk)
    return project


def moved_project(source: Project, *, seed: int, labels: list[str]) -> Project:
    """A new project with the source's items from its DPO export (positions from ``seed``) and ``labels``."""
    project = ProjectFactory(mode=source.mode, seed=seed, likert_points=source.likert_points)
    dpo = "".join(lines_of(source, "dpo", ties="mark")).encode()
    items_import_formatted(project=project, fmt="hf", handle=io.BytesIO(dpo), trl_chosen_as="none")
    labels_import(project=project, lines=labels)
    services.item_aggregates_recompute(project_id=project.pk)
    return project


def texts_by_position(project: Project) -> dict[str, list[str]]:
    return {
        item.external_id: [r.text for r in item.responses.order_by("position")]
        for item in Item.objects.filter(project=project)
    }


def preferred_texts(project: Project) -> dict[tuple[str, str], Any]:
    """(item, annotator) → what the label says, by response text: the chosen text (or "tie") for a choice, the
    favoured text and strength for a Likert point, text → (μ, ν) for IFS values."""
    preferred: dict[tuple[str, str], Any] = {}
    for line in lines_of(project, "annotations"):
        row = json.loads(line)
        text = {r["position"]: r["text"] for r in row["responses"]}
        if row["mode"] == Project.Mode.BINARY:
            said: Any = "tie" if row["choice"] == -1 else text[row["choice"]]
        elif row["mode"] == Project.Mode.LIKERT:
            middle = (project.likert_points + 1) / 2
            said = (
                "tie"
                if row["likert"] == middle
                else (text[0 if row["likert"] < middle else 1], abs(row["likert"] - middle))
            )
        else:
            said = {text[v["position"]]: (v["mu"], v["nu"]) for v in row["values"]}
        preferred[(row["item"], row["annotator"])] = said
    return preferred


def flipped(before: dict[Any, Any], after: dict[Any, Any]) -> int:
    """How many of ``before``'s keys say something else (or nothing) in ``after``."""
    return sum(after.get(key) != value for key, value in before.items())
