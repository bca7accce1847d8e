"""The columns of every export with their types, the same in every annotation mode: what ``datasets`` reads.

JSON Lines carry no types, so ``datasets`` guesses them from the values: a column that is null on every row (the
hesitation of a binary project) becomes the ``null`` type, and files of two modes then refuse to load together. The
dataset card therefore declares these features in its YAML block (``dataset_info.features``, read by
``datasets.load_dataset`` on the folder and by the Penumbra client), and the export writes exactly these columns.

Types are the ``datasets`` dtype names; a list is ``[inner]`` and a record a dict of columns. Every scalar may be
null. Pure Python: read by the export, the card and the tests.
"""

from __future__ import annotations

from typing import Any

#: The per-response values of the ``ifs`` export: one record per operator × criterion, so the type does not depend
#: on the project's criteria or on whether it has IFS values at all (binary and Likert items have none).
_AGGREGATE = {
    "operator": "string",
    "criterion": "string",
    "mu": "float64",
    "nu": "float64",
    "pi": "float64",
    "score": "float64",
}

FEATURES: dict[str, dict[str, Any]] = {
    # TRL's preference columns first (prompt, chosen, rejected: strings), then Penumbra's. The consensus strength
    # is ``consensus_margin``, not ``margin``: TRL's RewardTrainer reads a ``margin`` column into its loss.
    "dpo": {
        "prompt": "string",
        "chosen": "string",
        "rejected": "string",
        "chosen_model": "string",
        "rejected_model": "string",
        "p_chosen": "float64",
        "consensus_margin": "float64",
        "hesitation": "float64",
        "agreement": "float64",
        "n_annotators": "int64",
        "provenance": "string",
        "tie": "bool",
        "id": "string",
        "chosen_position": "int64",
        "rejected_position": "int64",
    },
    "soft": {
        "id": "string",
        "prompt": "string",
        "response_a": "string",
        "response_b": "string",
        "model_a": "string",
        "model_b": "string",
        "position_a": "int64",
        "position_b": "int64",
        "p_a_over_b": "float64",
        "consensus_margin": "float64",
        "hesitation": "float64",
        "agreement": "float64",
        "n_annotators": "int64",
        "provenance": "string",
        "tie": "bool",
    },
    "ifs": {
        "id": "string",
        "prompt": "string",
        "provenance": "string",
        "operator": "string",
        "best_position": "int64",
        "worst_position": "int64",
        "p_best": "float64",
        "consensus_margin": "float64",
        "hesitation": "float64",
        "agreement": "float64",
        "signed_preference": "float64",
        "tie": "bool",
        "n_annotators": "int64",
        "responses": [{"position": "int64", "text": "string", "model": "string", "aggregates": [_AGGREGATE]}],
    },
    "rankings": {
        "id": "string",
        "annotator": "string",
        "prompt": "string",
        "ranking": ["int64"],
        "responses": ["string"],
        "models": ["string"],
        "pairs": [{"chosen": "string", "rejected": "string", "chosen_position": "int64", "rejected_position": "int64"}],
    },
    "kto": {
        "prompt": "string",
        "completion": "string",
        "label": "bool",
        "id": "string",
        "position": "int64",
        "score": "float64",
        "source": "string",
        "n_annotators": "int64",
    },
    "annotations": {
        "item": "string",
        "annotator": "string",
        "mode": "string",
        "responses": [{"position": "int64", "text": "string", "model": "string"}],
        "response_order": ["int64"],
        "choice": "int64",
        "ranking": ["int64"],
        "both_bad": "bool",
        "likert": "int64",
        "values": [{"position": "int64", "criterion": "string", "mu": "float64", "nu": "float64"}],
        "blind": "bool",
        "suggestion_shown": "bool",
        "accepted_suggestion": "bool",
        "item_in_blind_sample": "bool",
        "exposures": [{"kind": "string", "at": "string"}],
        "time_spent_ms": "int64",
        "revision_count": "int64",
        "source": "string",
        "timestamp": "string",
        "updated_at": "string",
    },
}

#: The item-level formats take the lead's chosen metadata keys as extra string columns named ``metadata_<key>``.
METADATA_FORMATS = ("dpo", "soft", "ifs")
METADATA_PREFIX = "metadata_"


#: TRL's conversational shape: a list of messages, each with its role and content.
MESSAGES = [{"role": "string", "content": "string"}]
#: Where a project that holds conversations writes messages instead of text: the prompt, and the answers of the
#: formats TRL reads as conversations (each one assistant message).
_CONVERSATIONAL = {
    "dpo": ("prompt", "chosen", "rejected"),
    "soft": ("prompt",),
    "ifs": ("prompt",),
    "kto": ("prompt", "completion"),
    "rankings": ("prompt",),
}


def export_features(
    export_format: str, metadata: tuple[str, ...] = (), *, conversational: bool = False
) -> dict[str, Any]:
    """The columns of ``export_format`` in file order, with the metadata columns asked for at the end; with
    ``conversational`` (the project holds conversations) the texts TRL reads as conversations are messages."""
    columns = dict(FEATURES[export_format])
    if conversational:
        columns.update(dict.fromkeys(_CONVERSATIONAL.get(export_format, ()), MESSAGES))
        if export_format == "rankings":
            columns["pairs"] = [dict(columns["pairs"][0]) | {"chosen": MESSAGES, "rejected": MESSAGES}]
    if export_format in METADATA_FORMATS:
        columns.update({f"{METADATA_PREFIX}{key}": "string" for key in metadata})
    return columns


def _yaml_field(name: str, kind: Any, indent: str) -> list[str]:
    if isinstance(kind, str):
        return [f"{indent}- name: {name}", f"{indent}  dtype: {kind}"]
    inner = kind[0]
    if isinstance(inner, str):
        return [f"{indent}- name: {name}", f"{indent}  list: {inner}"]
    lines = [f"{indent}- name: {name}", f"{indent}  list:"]
    for child, child_kind in inner.items():
        lines += _yaml_field(child, child_kind, indent + "  ")
    return lines


def features_yaml(columns: dict[str, Any], indent: str = "") -> list[str]:
    """The columns in the YAML layout of ``datasets.Features._to_yaml_list`` (the card's ``dataset_info``).

    Names are written bare: they are the fixed names above and metadata keys limited to letters, digits and ``_``
    (aggregation.exports.options), so none needs quoting."""
    lines: list[str] = []
    for name, kind in columns.items():
        lines += _yaml_field(name, kind, indent)
    return lines


__all__ = ["FEATURES", "METADATA_FORMATS", "METADATA_PREFIX", "export_features", "features_yaml"]
