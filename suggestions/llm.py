"""A small client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, llama.cpp) and the validation of
their answers. No database access here: the suggestion services feed items in and store what comes out.

The model is asked for JSON ``{"preferred": <response number or "tie">, "rationale": str, "ifs": [{"mu", "nu"}]}``
with responses numbered from 1 in stored position order. An answer is accepted only if it is a valid label under
the same rule as everything else in Penumbra: μ, ν are whole thousandths (k/1000), μ, ν ≥ 0 and μ+ν ≤ 1. Anything
else is retried a bounded number of times and then reported as a failure with its reason, never as a label.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.conf import settings

from config.input_limits import whole_number
from projects.models import PERMILLE, TIE, Project

MAX_ATTEMPTS = 3
RETRY_BACKOFF_SECONDS = 0.25
# Float noise from JSON (0.1 * 1000 = 100.00000000000001) must not fail the whole-thousandths rule.
_PERMILLE_SLACK = 1e-6
# Client errors that a retry cannot fix (bad key, unknown model): fail at once instead of hammering the server.
_NON_RETRYABLE_STATUS = frozenset({400, 401, 403, 404, 422})

DEFAULT_INSTRUCTION_TEMPLATE = """\
You compare candidate answers to the same prompt and say which one is better.

Prompt:
{prompt}

{responses}

Judge the answers on: {criteria}.
Answer with one JSON object and nothing else, in this shape:
{{"preferred": <the number of the better response, or "tie">,
  "rationale": "<one or two sentences explaining why>",
  "ifs": [{{"mu": <support>, "nu": <opposition>}}, ... one object per response, in order]}}
For each response, "mu" is how strongly you support it as a good answer and "nu" how strongly you oppose it,
both between 0 and 1 with at most three decimals, and mu + nu must not exceed 1 (what is left is your hesitation).
There are {n_responses} responses, numbered 1 to {n_responses}."""


class AnswerInvalid(ValueError):
    """The endpoint answered, but not with a usable label. The message is the reason shown to the lead."""


class EndpointError(RuntimeError):
    """The endpoint did not answer usefully (timeout, connection refused, HTTP error)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str
    timeout_seconds: float
    concurrency: int
    instruction_template: str

    @property
    def is_configured(self) -> bool:
        return bool(self.base_url and self.model)

    @property
    def chat_url(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


def llm_config_for(project: Project) -> LLMConfig:
    """The project's endpoint settings, each falling back to the environment (settings.LLM_*)."""
    return LLMConfig(
        base_url=(project.llm_base_url or settings.LLM_BASE_URL).strip(),
        model=(project.llm_model or settings.LLM_MODEL).strip(),
        api_key=(project.llm_api_key or settings.LLM_API_KEY).strip(),
        timeout_seconds=float(settings.LLM_TIMEOUT_SECONDS),
        concurrency=max(1, int(settings.LLM_CONCURRENCY)),
        instruction_template=project.llm_instruction_template.strip() or DEFAULT_INSTRUCTION_TEMPLATE,
    )


@dataclass(frozen=True)
class ItemRequest:
    """What the model sees of one item: its prompt and the responses in stored position order."""

    item_id: int
    prompt: str
    responses: Sequence[str]
    criteria: Sequence[str] = ("overall quality",)


@dataclass(frozen=True)
class ParsedAnswer:
    preferred_position: int  # stored position, or TIE
    rationale: str
    values: list[tuple[int, int]] | None  # (μ, ν) per-mille per position


@dataclass
class SuggestionOutcome:
    item_id: int
    answer: ParsedAnswer | None
    attempts: int
    failure_reason: str = ""
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.answer is not None


def render_instruction(template: str, request: ItemRequest) -> str:
    responses = "\n\n".join(f"Response {number}:\n{text}" for number, text in enumerate(request.responses, start=1))
    values = {
        "prompt": request.prompt,
        "responses": responses,
        "criteria": ", ".join(request.criteria) or "overall quality",
        "n_responses": len(request.responses),
    }
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        # A custom template with stray braces or unknown fields still gets the item, appended plainly.
        return f"{template}\n\nPrompt:\n{request.prompt}\n\n{responses}"


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _whole_permille(raw: Any, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise AnswerInvalid(f"{what} is not a number.")
    scaled = float(raw) * PERMILLE
    whole = round(scaled)
    if abs(scaled - whole) > _PERMILLE_SLACK:
        raise AnswerInvalid(f"{what} = {raw} is not a whole number of thousandths (at most three decimals).")
    if not 0 <= whole <= PERMILLE:
        raise AnswerInvalid(f"{what} = {raw} is outside 0..1.")
    return whole


def _preferred_position(raw: Any, n_responses: int) -> int:
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text == "tie":
            return TIE
        text = text.removeprefix("response").strip()
        number = whole_number(text)
        if number is None:
            raise AnswerInvalid(f'"preferred" must be a response number from 1 to {n_responses} or "tie", not {raw!r}.')
        raw = number
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise AnswerInvalid(f'"preferred" must be a response number from 1 to {n_responses} or "tie", not {raw!r}.')
    if not 1 <= raw <= n_responses:
        raise AnswerInvalid(f'"preferred" = {raw} names no response (there are {n_responses}).')
    return raw - 1


def parse_answer(content: str, n_responses: int) -> ParsedAnswer:
    """Validate the model's message; raise AnswerInvalid naming the first problem."""
    fenced = _FENCE.match(content or "")
    text = fenced.group(1) if fenced else (content or "").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnswerInvalid(f"The answer is not valid JSON ({exc.msg} at character {exc.pos}).") from exc
    if not isinstance(data, dict):
        raise AnswerInvalid("The answer is not a JSON object.")
    missing = [key for key in ("preferred", "rationale", "ifs") if key not in data]
    if missing:
        raise AnswerInvalid(f"The answer lacks {', '.join(repr(key) for key in missing)}.")
    preferred = _preferred_position(data["preferred"], n_responses)
    rationale = data["rationale"]
    if not isinstance(rationale, str):
        raise AnswerInvalid('"rationale" must be text.')
    ifs = data["ifs"]
    if not isinstance(ifs, list) or len(ifs) != n_responses:
        raise AnswerInvalid(f'"ifs" must be a list with one {{"mu", "nu"}} per response ({n_responses}).')
    values: list[tuple[int, int]] = []
    for number, entry in enumerate(ifs, start=1):
        if not isinstance(entry, dict) or "mu" not in entry or "nu" not in entry:
            raise AnswerInvalid(f'"ifs" entry {number} must be an object with "mu" and "nu".')
        mu = _whole_permille(entry["mu"], f"mu of response {number}")
        nu = _whole_permille(entry["nu"], f"nu of response {number}")
        if mu + nu > PERMILLE:
            raise AnswerInvalid(f"mu + nu of response {number} is {(mu + nu) / PERMILLE:g}, more than 1.")
        values.append((mu, nu))
    return ParsedAnswer(preferred_position=preferred, rationale=rationale.strip(), values=values)


def chat_complete(client: httpx.Client, config: LLMConfig, instruction: str) -> str:
    """One chat completion; the assistant's text, or EndpointError / AnswerInvalid."""
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    body = {
        "model": config.model,
        "messages": [
            {"role": "system", "content": "You are a careful judge of answer quality. You reply with JSON only."},
            {"role": "user", "content": instruction},
        ],
        "temperature": 0,
    }
    try:
        reply = client.post(config.chat_url, json=body, headers=headers, timeout=config.timeout_seconds)
    except httpx.TimeoutException as exc:
        raise EndpointError(f"No answer within {config.timeout_seconds:g} s (timeout).") from exc
    except httpx.HTTPError as exc:
        raise EndpointError(f"Could not reach the endpoint: {exc.__class__.__name__}: {exc}.") from exc
    if reply.status_code >= 400:
        snippet = reply.text[:200].strip()
        raise EndpointError(
            f"HTTP {reply.status_code} from the endpoint{': ' + snippet if snippet else ''}.",
            retryable=reply.status_code not in _NON_RETRYABLE_STATUS,
        )
    try:
        return str(reply.json()["choices"][0]["message"]["content"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise AnswerInvalid("The endpoint's reply is not an OpenAI-style chat completion.") from exc


def suggest_one(
    client: httpx.Client, config: LLMConfig, request: ItemRequest, *, max_attempts: int = MAX_ATTEMPTS
) -> SuggestionOutcome:
    """Ask for one item's label, retrying bad answers and transient errors; never raises for endpoint trouble."""
    instruction = render_instruction(config.instruction_template, request)
    failures: list[str] = []
    for attempt in range(1, max_attempts + 1):
        try:
            answer = parse_answer(chat_complete(client, config, instruction), len(request.responses))
            return SuggestionOutcome(item_id=request.item_id, answer=answer, attempts=attempt, failures=failures)
        except AnswerInvalid as exc:
            failures.append(str(exc))
        except EndpointError as exc:
            failures.append(str(exc))
            if not exc.retryable:
                break
        if attempt < max_attempts:
            time.sleep(RETRY_BACKOFF_SECONDS * attempt)
    attempts = len(failures)
    reason = f"Failed after {attempts} attempt{'s' if attempts != 1 else ''}: {failures[-1]}"
    if len(set(failures)) > 1:
        reason += " Earlier: " + " | ".join(failures[:-1])
    return SuggestionOutcome(
        item_id=request.item_id, answer=None, attempts=attempts, failure_reason=reason, failures=failures
    )
