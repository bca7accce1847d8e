"""The client's options and rows as types, so a type checker catches a misspelt format or a row without a prompt.

Options are ``Literal`` strings (the server refuses any other value with a 400); rows are ``TypedDict`` shapes of the
JSON Lines the import endpoints read (the server's docs at /api/docs/ describe each field).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Format = Literal["native", "label-studio", "potato", "argilla", "hf"]
OnDuplicate = Literal["reject", "update", "skip"]
ChosenAs = Literal["gold", "suggestion", "none"]
RatingsRule = Literal["refuse", "binary", "likert"]
ResponseStatus = Literal["submitted", "draft", "discarded", "unknown"]
ExportFormat = Literal["dpo", "soft", "ifs", "annotations"]
Mode = Literal["ifs", "binary", "likert"]
Role = Literal["lead", "annotator"]


class ResponseRow(TypedDict):
    text: str
    model: NotRequired[str]


class SuggestionRow(TypedDict):
    preferred: int | Literal["tie"]
    rationale: NotRequired[str]
    model: NotRequired[str]
    ifs: NotRequired[list[tuple[float, float]]]


class _PromptRow(TypedDict):
    """What every item row has, whichever its shape: the prompt, and optionally its id and metadata."""

    prompt: str
    id: NotRequired[str | int]
    metadata: NotRequired[dict[str, Any]]
    lead_metadata: NotRequired[dict[str, Any]]


class ItemRow(_PromptRow):
    """An item in Penumbra's own shape: responses by index; ``gold`` and ``preferred`` are indexes or "tie"."""

    responses: list[str | ResponseRow]
    suggestion: NotRequired[SuggestionRow]
    gold: NotRequired[int | Literal["tie"]]


class PreferenceRow(_PromptRow):
    """A preference pair in TRL's columns; the chosen answer becomes gold, the suggestion or nothing (``chosen_as``)."""

    chosen: str
    rejected: str


class LabelRow(TypedDict):
    """An existing label: ``choice`` (binary: a position or "tie"), ``likert`` (1..k) or ``values`` (IFS)."""

    item: str
    annotator: str
    mode: Mode
    choice: NotRequired[int | Literal["tie"]]
    likert: NotRequired[int]
    values: NotRequired[list[dict[str, Any]]]
    time_spent_ms: NotRequired[int]
    timestamp: NotRequired[str]
    response_order: NotRequired[list[int]]
    suggestion_shown: NotRequired[bool]
