"""The dataset card's section on conclusions: the model leaderboard and the prediction-powered figures, each with
its method and sample sizes, and human-human agreement with both intervals. Pure Python: it renders the dict of
:func:`aggregation.conclusions.figures.conclusions` (as the API returns it) and nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Sources shown on the card, in this order: people's blind labels are the evidence; the LLM's beside them.
CARD_SOURCES = ("human_blind", "human_all", "gold", "llm")


def _n(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci: Any, digits: int = 3) -> str:
    return "—" if not ci else f"{_n(ci[0], digits)} to {_n(ci[1], digits)}"


def _leaderboard(figures: Mapping[str, Any]) -> list[str]:
    lines = ["### Model leaderboard", ""]
    boards = figures.get("leaderboard") or {}
    shown = False
    for source in CARD_SOURCES:
        entry = boards.get(source)
        if not entry:
            continue
        if entry.get("empty"):
            lines.append(f"- {entry['label']}: not reported ({entry['empty']}).")
            continue
        shown = True
        lines += [
            "",
            f"**{entry['label']}**: {entry['method']}, {entry['comparisons']} comparisons on {entry['items']} items "
            "(95 % intervals clustered by item).",
            "",
            "| rank | model | strength (95 %) | mean win rate (95 %) |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {row['rank']} | {row['model']} | {_n(row['strength'], 2)} ({_ci(row['strength_ci'], 2)}) | "
            f"{_n(row['win_rate'])} ({_ci(row['win_rate_ci'])}) |"
            for row in entry["rows"]
        ]
    if not shown:
        lines.append("")
        lines.append("No leaderboard: responses need model names and labels between two models.")
    return lines


def _prediction_powered(figures: Mapping[str, Any]) -> list[str]:
    ppi = figures.get("prediction_powered") or {}
    lines = ["", "### What the dataset says (prediction-powered inference)", ""]
    if ppi.get("empty"):
        return [*lines, f"Not reported: {ppi['empty']}."]
    lines += [
        f"The LLM labelled {ppi['population_items']} items; people labelled a random sample of "
        f"{ppi['human_items']} of them ({figures.get('sample', 'blind')} sample, known inclusion probabilities). "
        "Method: PPI++ (Angelopoulos et al. 2023) with power tuning, weighted by the inclusion probabilities; the "
        "people-only estimate and the LLM-only figure beside it. 'Worth' is the number of human-labelled items the "
        "people-only estimate would need for the same precision.",
        "",
        "| figure | prediction-powered (95 %) | people only (95 %) | LLM only | λ | human items (worth) |",
        "|---|---|---|---|---|---|",
    ]
    for f in ppi.get("figures", []):
        if "value" not in f:
            lines.append(f"| {f['label']} | not reported ({f.get('empty', '')}) | | | | |")
            continue
        lines.append(
            f"| {f['label']} | {_n(f['value'])} ({_ci(f['ci'])}) | {_n(f['human_only']['value'])} "
            f"({_ci(f['human_only']['ci'])}) | {_n(f['llm_only'])} | {_n(f['lambda'], 2)} | "
            f"{f['human_labelled_items']} ({f['effective_human_items']:.0f}) |"
        )
    return lines


def _agreement(figures: Mapping[str, Any]) -> list[str]:
    h = figures.get("human_agreement") or {}
    if h.get("value") is None:
        return []
    claims = h.get("claims", {})
    return [
        "",
        "### Human-human agreement",
        "",
        f"Pairwise agreement {_n(h['value'])} ({h['pairs']} pairs of labels, {h['items']} items, "
        f"{h['annotators']} annotators).",
        f"- {_ci(h.get('ci_items'))}: {claims.get('ci_items', '')}",
        f"- {_ci(h.get('ci_annotator_population'))}: {claims.get('ci_annotator_population', '')}",
    ]


def conclusions_section(figures: Mapping[str, Any] | None) -> list[str]:
    """The card's "Conclusions" section as Markdown lines (empty without figures)."""
    if not figures:
        return []
    return ["## Conclusions", "", *_leaderboard(figures), *_prediction_powered(figures), *_agreement(figures), ""]


__all__ = ["conclusions_section"]
