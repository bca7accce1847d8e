"""Turns the annotation page's POST into the fields of an annotation.saving.SaveRequest.

Only shape: anything that is not a whole number is passed through as given, so the service names the problem.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict

from config.input_limits import number_text_problem
from projects.models import Criterion, Project, Response


def _maybe_int(raw: str | None) -> Any:
    if raw is None:
        return None
    raw = raw.strip()
    if raw == "" or number_text_problem(raw) is not None:
        # Too long to be a slider value: passed on as text, which the service refuses by name.
        return raw[:20] + "…" if raw else raw
    try:
        return int(raw)
    except ValueError:
        return raw


#: The binary radio's value for "both bad" (stored as a tie with ``both_bad``).
BOTH_BAD = "both_bad"


def annotation_post_parse(
    *, data: QueryDict, project: Project, responses: list[Response], criteria: list[Criterion]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the SaveRequest's fields, what to show again in the form if the save is refused)."""
    arguments: dict[str, Any] = {
        "client_token": data.get("client_token") or None,
        "time_spent_ms": _maybe_int(data.get("time_spent_ms")) or 0,
        "accepted": data.get("accepted") in {"1", "true", "on"},
        "reason": "resolution" if data.get("stage") == "resolution" else "save",
    }
    posted: dict[str, Any] = {"values": {}, "accepted": arguments["accepted"]}
    if project.mode == Project.Mode.IFS:
        values = []
        for response in responses:
            for criterion in criteria:
                key = f"{response.position}-{criterion.pk}"
                if f"mu-{key}" not in data and f"nu-{key}" not in data:
                    continue
                mu, nu = _maybe_int(data.get(f"mu-{key}")), _maybe_int(data.get(f"nu-{key}"))
                values.append({"response": response.position, "criterion": criterion.name, "mu": mu, "nu": nu})
                if isinstance(mu, int) and isinstance(nu, int):
                    posted["values"][key] = (mu, nu)
        arguments["values"] = values
    elif project.mode == Project.Mode.BINARY:
        if data.get("binary_choice") == BOTH_BAD:
            # "Both bad" is a tie that says neither answer is good (annotation.checks.check_both_bad).
            arguments["both_bad"] = posted["both_bad"] = True
            return arguments, posted
        arguments["binary_choice"] = _maybe_int(data.get("binary_choice"))
        ranking = [_maybe_int(part) for part in (data.get("ranking") or "").split(",")[:20] if part.strip()]
        if ranking:
            # A ranking (three responses or more) names the best itself: the choice is its head.
            arguments["ranking"] = ranking
            posted["ranking"] = ranking
            if arguments["binary_choice"] is None:
                arguments["binary_choice"] = ranking[0]
        if isinstance(arguments["binary_choice"], int):
            posted["binary_choice"] = arguments["binary_choice"]
        else:
            arguments["binary_choice"] = arguments["binary_choice"] or ""
    else:
        arguments["likert_value"] = _maybe_int(data.get("likert_value"))
        if isinstance(arguments["likert_value"], int):
            posted["likert_value"] = arguments["likert_value"]
        else:
            arguments["likert_value"] = arguments["likert_value"] or ""
    return arguments, posted
