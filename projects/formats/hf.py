"""Hugging Face preference datasets in the shapes TRL documents, as JSON Lines, a JSON array or Parquet
(``dataset.to_json`` / ``dataset.to_parquet``).

Shapes: standard (``prompt``, ``chosen``, ``rejected`` texts); conversational (chat messages ``[{"role",
"content"}]``); implicit prompt (no ``prompt`` column: the prompt is what ``chosen`` and ``rejected`` share at the
start, as TRL's ``extract_prompt`` reads it, and for Anthropic HH strings everything up to the last shared
"\\n\\nAssistant: " turn); and UltraFeedback-binarized, whose ``chosen``/``rejected`` repeat the user turn of an
explicit ``prompt`` (the shared turns are cut from both). A response is the text of what remains (its messages'
contents, never a role marker); it may be empty, as in the native import. A conversational prompt (chat messages,
the turns the answers share, or an HH dialogue split into turns) is handed on as its messages, which the item keeps
(``Item.prompt_messages``), so the export can give TRL's conversational shape back.

UltraFeedback's own rows (``instruction``, ``completions``) give one item with every completion as a response (four
in the released set), their scores and critiques kept for the lead.

Items: the id is ``id`` or ``prompt_id`` when the dataset has one (else a hash of the content, the same on every
import). The chosen answer's position is drawn from the project seed; the preference becomes gold, the suggestion
or nothing (``trl_chosen_as``). Models come from ``chosen_model``/``rejected_model`` (or ``chosen-model``/…). Every
other column, ``messages`` and ``source`` included, is kept as it is in the lead-only metadata.

Labels: ratings of the two answers (``chosen_rating``/``rejected_rating``, ``chosen-rating``/…, or
``score_chosen``/``score_rejected``) become a label by the lead's ``ratings_rule``, by the annotator named in an
``annotator`` column or ``hf-dataset``. Each label names its responses by text and model, so the import puts it on
the responses as this project stored them, wherever the seed drew them.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from typing import IO, Any

from projects import conversation
from projects.blind import trl_chosen_first
from projects.formats.common import (
    Converted,
    Judgment,
    Options,
    RecordInvalid,
    Source,
    label_row,
    lead_only,
    number,
    read_records,
)

TOOL = "Hugging Face dataset"
TRL_COLUMNS = ("prompt", "chosen", "rejected")
ID_COLUMNS = ("id", "prompt_id")
RATING_COLUMNS = (
    ("chosen_rating", "rejected_rating"),
    ("chosen-rating", "rejected-rating"),
    ("score_chosen", "score_rejected"),
)
MODEL_COLUMNS = (("chosen_model", "rejected_model"), ("chosen-model", "rejected-model"))
DEFAULT_ANNOTATOR = "hf-dataset"
PARQUET_MAGIC = b"PAR1"
HH_TURN = conversation.HH_ASSISTANT


def _rows(handle: IO[bytes]) -> Iterator[tuple[int, str, Any]]:
    data = handle.read()
    if data[:4] == PARQUET_MAGIC:
        import pyarrow as pa  # comes with datasets; only Parquet uploads need it
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(io.BytesIO(data))
        except (pa.ArrowException, OSError) as exc:
            yield 1, "file", RecordInvalid(f"not a readable Parquet file: {exc}")
            return
        for number_, row in enumerate(table.to_pylist(), start=1):
            yield number_, f"row {number_}", row
        return
    yield from read_records(io.BytesIO(data), what="row")


def external_id(row: dict[str, Any]) -> str:
    for column in ID_COLUMNS:
        value = row.get(column)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    content = json.dumps([row.get(c) for c in TRL_COLUMNS], sort_keys=True, ensure_ascii=False)
    return "hf-" + hashlib.sha1(content.encode()).hexdigest()[:16]


def _is_chat(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) and "content" in m for m in value)


def _content(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _chat_text(messages: list[dict[str, Any]]) -> str:
    """A response: its messages' contents, never a role marker (an annotator judges the answer, not the transcript)."""
    return "\n\n".join(_content(m) for m in messages)


def _shared_turns(chosen: list[dict[str, Any]], rejected: list[dict[str, Any]]) -> int:
    shared = 0
    while shared < min(len(chosen), len(rejected)) and chosen[shared] == rejected[shared]:
        shared += 1
    return shared


def _implicit_text_prompt(chosen: str, rejected: str) -> int:
    """Where the shared prompt of two texts ends: Anthropic HH's last shared assistant turn, else TRL's rule."""
    shared = 0
    while shared < min(len(chosen), len(rejected)) and chosen[shared] == rejected[shared]:
        shared += 1
    turn = chosen.rfind(HH_TURN, 0, shared)
    if turn != -1 and chosen.startswith("\n\nHuman: "):
        return turn + len(HH_TURN)
    if 0 < shared < min(len(chosen), len(rejected)) and chosen[shared - 1] == " ":
        shared -= 1  # TRL's extract_prompt leaves the space before the answers with the answers
    return shared


def _pair(row: dict[str, Any]) -> tuple[str | list[dict[str, Any]], str, str]:
    """(prompt, chosen, rejected), with the shared prompt cut from the answers: the answers as texts, the prompt as
    a text or, when the source is a conversation (chat messages or Anthropic HH), as its messages."""
    prompt, chosen, rejected = row.get("prompt"), row["chosen"], row["rejected"]
    if _is_chat(chosen) and _is_chat(rejected):
        shared = _shared_turns(chosen, rejected)
        if prompt in (None, "", []) or (isinstance(prompt, str) and shared):
            # No prompt column, or a text one that the answers repeat as their first turns (UltraFeedback
            # binarized): the shared turns are the conversation.
            if shared == 0:
                raise RecordInvalid(f"{TOOL} row has no prompt column and chosen and rejected share no first turn")
            prompt = chosen[:shared]
        return _prompt_of(prompt), _chat_text(chosen[shared:]), _chat_text(rejected[shared:])
    if isinstance(chosen, str) and isinstance(rejected, str):
        if prompt in (None, "", []):
            cut = _implicit_text_prompt(chosen, rejected)
            if not chosen[:cut].strip():
                raise RecordInvalid(f"{TOOL} row has no prompt column and chosen and rejected share no prompt")
            text = chosen[:cut]
            shown: str | list[dict[str, Any]] = text
            if text.startswith(conversation.HH_HUMAN):
                shown = conversation.hh_messages(text)
            return shown, chosen[cut:], rejected[cut:]
        return _prompt_of(prompt), chosen, rejected
    raise RecordInvalid(f"{TOOL} chosen and rejected must both be texts or both be chat messages")


def _prompt_of(value: Any) -> str | list[dict[str, Any]]:
    if isinstance(value, str) and value.strip():
        return value
    if _is_chat(value) and value:
        return list(value)  # checked as messages by the native import (projects.imports.rows)
    raise RecordInvalid(f"{TOOL} prompt must be a non-empty text or chat messages")


def _checked(record: Any) -> dict[str, Any]:
    if isinstance(record, RecordInvalid):
        raise record
    if not isinstance(record, dict):
        raise RecordInvalid(f"{TOOL} row must be an object")
    missing = [c for c in ("chosen", "rejected") if record.get(c) is None]
    if missing:
        raise RecordInvalid(f"{TOOL} row has no {', '.join(repr(c) for c in missing)} (TRL preference columns)")
    return record


def _models(row: dict[str, Any]) -> tuple[str, str]:
    for chosen, rejected in MODEL_COLUMNS:
        if chosen in row or rejected in row:
            return str(row.get(chosen) or "")[:200], str(row.get(rejected) or "")[:200]
    return "", ""


def items(handle: IO[bytes], *, options: Options | None = None, seed: int = 0, chosen_as: str = "gold") -> Converted:
    out = Converted()
    for number_, name, record in _rows(handle):
        source = Source(number_, name)
        if isinstance(record, dict) and "completions" in record and "instruction" in record:
            try:
                out.rows.append((source, _completions_row(record)))
            except RecordInvalid as exc:
                out.errors.append((source, str(exc)))
            continue
        try:
            row = _checked(record)
            prompt, chosen, rejected = _pair(row)
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        item_id = external_id(row)
        chosen_model, rejected_model = _models(row)
        pair = [{"text": chosen, "model": chosen_model}, {"text": rejected, "model": rejected_model}]
        first = trl_chosen_first(seed=seed, external_id=item_id)
        chosen_at = 0 if first else 1
        native: dict[str, Any] = {
            "id": item_id,
            "prompt": prompt,
            "responses": pair if first else pair[::-1],
            "lead_metadata": lead_only({k: v for k, v in row.items() if k not in TRL_COLUMNS}),
        }
        if chosen_as == "gold":
            native["gold"] = chosen_at
        elif chosen_as == "suggestion":
            native["suggestion"] = {"preferred": chosen_at, "model": "dataset-chosen"}
        out.rows.append((source, native))
    return out


def _completions_row(row: dict[str, Any]) -> dict[str, Any]:
    """An UltraFeedback row (``instruction``, ``completions`` [{"model", "response", …}]): every completion is a
    response, in the file's order (k may exceed two: a binary project ranks them). Scores, critiques and the
    reference answers would tell annotators the answer, so they stay in the lead-only metadata."""
    instruction, completions = row["instruction"], row["completions"]
    if not isinstance(instruction, str) or not instruction.strip():
        raise RecordInvalid(f"{TOOL} instruction must be a non-empty text")
    if not isinstance(completions, list) or len(completions) < 2:
        raise RecordInvalid(f"{TOOL} completions must be a list of at least 2 completions")
    responses = []
    for index, completion in enumerate(completions):
        if not isinstance(completion, dict) or not isinstance(completion.get("response"), str):
            raise RecordInvalid(f"{TOOL} completions[{index}] has no response text")
        responses.append({"text": completion["response"], "model": str(completion.get("model") or "")[:200]})
    ids = [row.get(c) for c in ID_COLUMNS if isinstance(row.get(c), str | int) and str(row.get(c)).strip()]
    content = json.dumps([instruction, [r["text"] for r in responses]], ensure_ascii=False)
    item_id = str(ids[0]).strip() if ids else "hf-" + hashlib.sha1(content.encode()).hexdigest()[:16]
    return {
        "id": item_id,
        "prompt": instruction,
        "responses": responses,
        "lead_metadata": lead_only(
            {
                **{k: v for k, v in row.items() if k not in ("instruction", "completions")},
                # The texts are the responses; the rest of each completion (scores, critique) is the lead's.
                "completions": [{k: v for k, v in c.items() if k != "response"} for c in completions],
            }
        ),
    }


def _ratings(row: dict[str, Any]) -> tuple[float, float]:
    for chosen, rejected in RATING_COLUMNS:
        if row.get(chosen) is not None and row.get(rejected) is not None:
            return number(row[chosen], f"{TOOL} {chosen}"), number(row[rejected], f"{TOOL} {rejected}")
    names = ", ".join("/".join(pair) for pair in RATING_COLUMNS)
    raise RecordInvalid(
        f"{TOOL} row has no ratings ({names}): without ratings its preference is the items' gold (import it as items)"
    )


def labels(handle: IO[bytes], *, mode: str, likert_points: int, seed: int, options: Options | None = None) -> Converted:
    options = options or Options()
    out = Converted()
    for number_, name, record in _rows(handle):
        source = Source(number_, name)
        try:
            row = _checked(record)
            ratings = _ratings(row)
            _prompt, chosen_text, rejected_text = _pair(row)
            chosen_model, rejected_model = _models(row)
            annotator = str(row.get("annotator") or DEFAULT_ANNOTATOR)
            judgment = Judgment(item=external_id(row), annotator=annotator, ratings=ratings)
            native = label_row(judgment, mode=mode, likert_points=likert_points, tool=TOOL, options=options)
            # Positions 0 and 1 are chosen and rejected here; the import finds where the project stored each text.
            native["responses"] = [
                {"position": 0, "text": chosen_text, "model": chosen_model or None},
                {"position": 1, "text": rejected_text, "model": rejected_model or None},
            ]
        except RecordInvalid as exc:
            out.errors.append((source, str(exc)))
            continue
        out.note(options.ratings_note())
        out.rows.append((source, native))
    return out
