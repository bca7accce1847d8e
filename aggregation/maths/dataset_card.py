"""The dataset card shipped with every export: a ``README.md`` in the Hugging Face dataset card layout (YAML metadata
block, then the card's sections), saying where every label came from and how far the model's labels can be trusted.

Pure Python, no Django: :func:`dataset_card` renders a :class:`CardFacts` that the export service fills from the
stored figures, so the card says exactly what the dashboard and ``/api/projects/{id}/stats/`` say. Figures arrive as
the JSON dicts those places use (``{"value", "n", "ci", "reason"}`` for agreement figures, the certification and
audit dicts of :mod:`aggregation.maths.certification`); a missing or withheld figure is written as "not reported" with
its reason, never as 0.

Provenance counts (labels, or items for the model's labels):
- ``human_blind``: labels saved with no exposure to any machine answer for that item (evidence about the model);
- ``human_shown``: labels saved or revised after a machine answer was on screen (anchored by design: they say how
  often people accept the model, not how good it is);
- ``model_handoff``: items whose label is the model's, after a handoff on blind agreement;
- ``model_certified``: items whose label is the model's, after certification of its accuracy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aggregation.maths.conclusion_card import conclusions_section

PROVENANCES = ("human_blind", "human_shown", "model_handoff", "model_certified")
PROVENANCE_TEXT = {
    "human_blind": "human labels given blind (no machine answer seen before or after saving)",
    "human_shown": "human labels given or revised with a machine answer on screen",
    "model_handoff": "items labelled by the model after a handoff on blind agreement",
    "model_certified": "items labelled by the model after certification of its accuracy",
}


@dataclass(frozen=True)
class CardFacts:
    name: str
    slug: str
    mode: str
    criteria: Sequence[str]
    items: int
    files: Sequence[str]  # the data files this card describes, e.g. ("dpo.jsonl",)
    export_format: str
    generated_at: str
    provenance: Mapping[str, int]
    labels: int = 0
    labels_with_suggestion_shown: int = 0
    blind_agreement: Mapping[str, Any] | None = None
    shown_agreement: Mapping[str, Any] | None = None
    anchoring_gap: Mapping[str, Any] | None = None
    human_human: Mapping[str, Any] | None = None
    gold_agreement: Mapping[str, Any] | None = None
    certification: Mapping[str, Any] | None = None
    audit: Mapping[str, Any] | None = None
    calibration: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    verification: Mapping[str, Any] | None = None
    #: The conclusions figures (:func:`aggregation.conclusions.figures.conclusions`): leaderboard, PPI, agreement.
    conclusions: Mapping[str, Any] | None = None
    license: str = "other"
    language: Sequence[str] = field(default_factory=tuple)
    #: The export's columns as YAML lines of ``datasets`` features (aggregation.exports.schema.features_yaml):
    #: written as ``dataset_info.features`` so ``datasets`` reads the same types in every mode.
    features: Sequence[str] = field(default_factory=tuple)


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` tag for ``n`` rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, tag in bounds:
        if n < bound:
            return tag
    return "1M<n<10M" if n < 10_000_000 else "n>10M"


def _q(text: str) -> str:
    # A JSON string is a valid YAML scalar: quotes, colons and newlines in a project name stay data.
    return json.dumps(text, ensure_ascii=False)


def _share(value: float | None) -> str:
    return "not reported" if value is None else f"{value:.1%}"


def _interval(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" (95 % interval {ci[0]:.1%} to {ci[1]:.1%})"


def _figure(figure: Mapping[str, Any] | None, unit: str = "comparisons") -> str:
    if not figure or figure.get("value") is None:
        reason = (figure or {}).get("reason") or (figure or {}).get("hint")
        return "not reported" + (f" ({reason})" if reason else "")
    value = float(figure["value"])
    n = figure.get("n", figure.get("items"))
    count = f", {n} {unit}" if n is not None else ""
    return f"{value:.1%}{_interval(figure.get('ci'))}{count}"


def _gap(figure: Mapping[str, Any] | None) -> str:
    if not figure or figure.get("value") is None:
        reason = (figure or {}).get("hint") or (figure or {}).get("reason")
        return "not reported" + (f" ({reason})" if reason else "")
    ci = figure.get("ci")
    interval = f" (95 % interval {ci[0]:+.1%} to {ci[1]:+.1%})" if ci and None not in ci else ""
    return f"{float(figure['value']):+.1%}{interval}"


def _front_matter(facts: CardFacts) -> list[str]:
    lines = ["---", f"pretty_name: {_q(facts.name)}", f"license: {_q(facts.license)}"]
    if facts.language:
        lines += ["language:", *[f"- {_q(code)}" for code in facts.language]]
    lines += [
        "task_categories:",
        "- text-generation",
        "tags:",
        "- preference",
        "- human-feedback",
        f"- {_q(facts.export_format)}",
        "- penumbra",
        "size_categories:",
        f"- {size_category(facts.items)}",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        *[f"    path: {_q(path)}" for path in facts.files[:1]],
    ]
    if facts.features:
        lines += ["dataset_info:", "  features:", *[f"  {line}" for line in facts.features]]
    lines.append("---")
    return lines


def _provenance_table(facts: CardFacts) -> list[str]:
    lines = ["| Provenance | Count | Meaning |", "|---|---:|---|"]
    for key in PROVENANCES:
        lines.append(f"| `{key}` | {int(facts.provenance.get(key, 0))} | {PROVENANCE_TEXT[key]} |")
    return lines


def _model_section(facts: CardFacts) -> list[str]:
    lines = ["### How far the model's labels can be trusted", ""]
    lines.append(f"- Blind agreement (model vs unaided people): {_figure(facts.blind_agreement)}.")
    lines.append(f"- Shown agreement (model vs people who saw its answer): {_figure(facts.shown_agreement)}.")
    lines.append(f"- Anchoring gap (shown − blind): {_gap(facts.anchoring_gap)}.")
    lines.append(f"- Human-human agreement on blind items (the ceiling): {_figure(facts.human_human, 'pairs')}.")
    lines.append(f"- Model vs gold, where gold exists: {_figure(facts.gold_agreement)}.")
    shown = facts.labels_with_suggestion_shown
    share = shown / facts.labels if facts.labels else None
    lines.append(f"- Labels given with a machine suggestion on screen: {shown} of {facts.labels} ({_share(share)}).")
    lines.append("")
    cert = facts.certification
    if cert:
        estimate = cert.get("estimate") or {}
        verdict = "certified" if cert.get("certified") else "not certified"
        lines.append(
            f"- Certification: **{verdict}** at threshold {float(cert.get('threshold', 0)):.0%}; the model's "
            f"accuracy on the items it labels is {_figure(estimate, 'items')} ({cert.get('reason', '')})."
        )
    else:
        lines.append("- Certification: none run.")
    audit = facts.audit
    if audit:
        lines.append(
            f"- Audit after handoff: {audit.get('state', 'unknown')}; {_figure(audit.get('estimate'), 'items')}"
            f" ({audit.get('reason', '')})."
        )
    else:
        lines.append("- Audit after handoff: none run.")
    if facts.calibration:
        lines += ["", "Calibration (the model's accuracy by its stated confidence):", ""]
        lines += ["| Confidence | Accuracy | 95 % interval | Items |", "|---|---:|---|---:|"]
        for row in facts.calibration:
            ci = row.get("ci")
            interval = f"{ci[0]:.1%} to {ci[1]:.1%}" if ci else "not reported"
            lines.append(
                f"| {float(row['low']):.2f}-{float(row['high']):.2f} | {_share(row.get('value'))} | {interval} | "
                f"{int(row.get('items') or 0)} |"
            )
    verification = facts.verification
    if verification and verification.get("answers"):
        lines.append("")
        lines.append(
            f"- Verification (model's answer on screen, keep or change): kept {_share(verification.get('keep'))}"
            f"{_interval(verification.get('keep_ci'))}, changed {_share(verification.get('change'))}, "
            f"{verification.get('answers')} answers on {verification.get('items')} items. These measure acceptance, "
            "not accuracy, and enter none of the figures above."
        )
    return lines


def dataset_card(facts: CardFacts) -> str:
    """The card as Markdown with a YAML metadata block (module docstring)."""
    model_items = int(facts.provenance.get("model_handoff", 0)) + int(facts.provenance.get("model_certified", 0))
    criteria = ", ".join(facts.criteria) or "overall"
    lines = [
        *_front_matter(facts),
        "",
        f"# Dataset Card for {facts.name}",
        "",
        f"Side-by-side preference labels exported from the Penumbra project `{facts.slug}` on {facts.generated_at}.",
        "",
        "## Dataset Details",
        "",
        "### Dataset Description",
        "",
        f"- **Items:** {facts.items}, of which {model_items} carry the model's label rather than people's.",
        f"- **Annotation mode:** {facts.mode}; criteria: {criteria}.",
        f"- **Export format:** `{facts.export_format}`; files: {', '.join(f'`{f}`' for f in facts.files)}.",
        f"- **License:** {facts.license}.",
        "",
        "## Uses",
        "",
        "Preference tuning (DPO, reward models) and the study of annotation. Filter on `provenance` to keep only "
        "human labels, or only labels given blind, when the model's own answers must not feed back into training.",
        "",
        "## Dataset Structure",
        "",
        "One JSON object a line. Every row names its `provenance`; the columns are described in the Penumbra README "
        f"under the `{facts.export_format}` export, and their types are declared above (`dataset_info.features`, "
        "the same in every annotation mode). `consensus_margin` is how firmly the annotators agree (S_chosen − "
        "S_rejected, 0 to 2), not a reward margin for TRL's RewardTrainer.",
        "",
        "## Dataset Creation",
        "",
        "### Annotations",
        "",
        "#### Annotation process",
        "",
        "People scored each response with support and opposition sliders (or a binary or Likert choice). A fixed "
        "random sample of items was labelled blind: no machine answer reached the person before or after saving. "
        "Labels given with the model's suggestion on screen are anchored by design; only blind labels on items drawn "
        "with a recorded inclusion probability count as evidence about the model's accuracy.",
        "",
        *_provenance_table(facts),
        "",
        *_model_section(facts),
        "",
        *conclusions_section(facts.conclusions),
        "## Bias, Risks, and Limitations",
        "",
        "Blind agreement is not the model's accuracy: people err too, and on a subjective task human-human "
        "agreement is its ceiling. Agreement cannot reveal rubber-stamping: a person who accepts every suggestion "
        "agrees perfectly with the model. Intervals treat items, not labels, as the independent units.",
        "",
        "## Dataset Card Contact",
        "",
        "The project's leads.",
        "",
    ]
    return "\n".join(lines)


__all__ = ["PROVENANCES", "CardFacts", "dataset_card", "size_category"]
