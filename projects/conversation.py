"""A prompt as a conversation: the one rule for chat messages at every door (imports, the page, the exports).

A prompt is either a text or a list of messages ``{"role", "content", "name"?}`` with the roles TRL and the OpenAI chat
format use (system, user, assistant; tool turns of agent logs are kept as "tool"). Each response is the next
assistant turn. The messages are stored as they came (``Item.prompt_messages``) beside a flattened text
(``Item.prompt``), which older paths (the LLM's prompt, search, CSV) keep reading.

Anthropic HH keeps a conversation as one string, ``"\\n\\nHuman: …\\n\\nAssistant: …"``; ``hh_messages`` splits
it the way TRL's hh-rlhf script does. Pure: no Django import.
"""

from __future__ import annotations

import json
from typing import Any

ROLES = ("system", "user", "assistant", "tool")
HH_HUMAN = "\n\nHuman: "
HH_ASSISTANT = "\n\nAssistant: "
NAME_MAX = 100


class MessagesInvalid(ValueError):
    pass


def is_messages(value: Any) -> bool:
    """Whether a value has the shape of chat messages (a non-empty list of objects with a content)."""
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "content" in m for m in value)


def _content(value: Any) -> str:
    # Multimodal content parts ([{"type": "text", …}]) are kept as JSON text until images are supported.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def messages_check(value: Any, *, what: str = "prompt") -> list[dict[str, str]]:
    """The messages in their stored shape, or MessagesInvalid naming the first bad message.

    A role is required (one of ROLES); the content is a text (other JSON is kept as its JSON text); a name is
    optional. Keys beyond these are dropped: they are not part of a turn.
    """
    if not is_messages(value):
        raise MessagesInvalid(f'{what} must be a text or a list of messages {{"role", "content"}}')
    checked: list[dict[str, str]] = []
    for index, message in enumerate(value):
        role = message.get("role")
        if role not in ROLES:
            raise MessagesInvalid(f"{what}[{index}].role must be one of {', '.join(ROLES)}, not {role!r}")
        turn = {"role": role, "content": _content(message["content"])}
        name = message.get("name")
        if name not in (None, ""):
            if not isinstance(name, str) or len(name) > NAME_MAX:
                raise MessagesInvalid(f"{what}[{index}].name must be a text of at most {NAME_MAX} characters")
            turn["name"] = name
        checked.append(turn)
    if not any(m["content"].strip() for m in checked if m["role"] != "system"):
        raise MessagesInvalid(f"{what} has no message with any content")
    return checked


def messages_flatten(messages: list[dict[str, str]]) -> str:
    """The text of a conversation for paths that read text: one message is its content; several keep who said what."""
    if len(messages) == 1:
        return messages[0]["content"]
    return "\n\n".join(f"**{m['role']}:** {m['content']}" for m in messages)


def hh_messages(text: str) -> list[dict[str, str]]:
    """An Anthropic HH prompt ("\\n\\nHuman: …\\n\\nAssistant: …", the last assistant turn open) as messages."""
    body = text[: -len(HH_ASSISTANT)] if text.endswith(HH_ASSISTANT) else text
    turns: list[dict[str, str]] = []
    for part in (p for p in body.split(HH_HUMAN) if p):
        user, *assistant = part.split(HH_ASSISTANT)
        turns.append({"role": "user", "content": user})
        turns.extend({"role": "assistant", "content": a} for a in assistant)
    return turns


def trl_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as TRL documents them, ``{"role", "content"}`` each: the same keys in every message of every row,
    which `datasets` needs to type the column as a list of structs (with a name on some messages only it falls back
    to untyped JSON). Names stay on the item and on the page."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def assistant_turn(text: str) -> list[dict[str, str]]:
    """A response as TRL's conversational ``chosen`` / ``rejected`` give it: one assistant message."""
    return [{"role": "assistant", "content": text}]


def export_prompt(
    prompt: str, messages: list[dict[str, str]] | None, *, conversational: bool
) -> str | list[dict[str, str]]:
    """An item's prompt as an export writes it. In a project that holds conversations every prompt is a list of
    messages (a plain prompt as one user message), so the column keeps one type for ``datasets``; elsewhere the text."""
    if messages is not None:
        return trl_messages(messages)
    return [{"role": "user", "content": prompt}] if conversational else prompt
