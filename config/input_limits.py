"""Limits every request body and query string passes before any view sees it, so hostile input gets a 400 in the
API's JSON error format instead of reaching PostgreSQL (which refuses NUL characters with an exception) or Python's
recursive JSON decoder.

- ``SafeJSONParser``: DRF's JSON parser, plus a size limit (DATA_UPLOAD_MAX_MEMORY_SIZE), a nesting limit
  (MAX_JSON_DEPTH) and a refusal of NUL characters in any key or string. Python's decoder raises RecursionError on
  deep nesting; it is turned into a ParseError.
- ``RefuseNulInQueryMiddleware``: a query parameter with a NUL character is refused with the parameter's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32
NUL = "\x00"
NUL_MESSAGE = "NUL characters (\\u0000) are not allowed in text."


DEPTH_MESSAGE = f"JSON nested deeper than {MAX_JSON_DEPTH} levels."


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` (decoded JSON) cannot be stored: too deep, or a NUL character in a key or string; None if fine.
    Iterative, so a deep value cannot exhaust the stack here either. Import rows ask it too."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict | list):
            if depth > MAX_JSON_DEPTH:
                return DEPTH_MESSAGE
            children = current.items() if isinstance(current, dict) else enumerate(current)
            for key, child in children:
                if isinstance(key, str) and NUL in key:
                    return NUL_MESSAGE
                stack.append((child, depth + 1))
        elif isinstance(current, str) and NUL in current:
            return NUL_MESSAGE
    return None


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        request = (parser_context or {}).get("request")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        length = request.META.get("CONTENT_LENGTH") if request is not None else None
        if limit is not None and length and str(length).isdigit() and int(length) > limit:
            raise RequestDataTooBig(f"The request body is larger than {limit} bytes.")
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(DEPTH_MESSAGE) from None
        problem = json_value_problem(data)
        if problem is not None:
            raise ParseError(problem)
        return data


class RefuseNulInQueryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name, values in request.GET.lists():
            if NUL in name or any(NUL in value for value in values):
                field = name.replace(NUL, "")
                body = {"detail": "Invalid input.", "errors": {field: [NUL_MESSAGE]}}
                if request.path.startswith("/api/"):
                    return JsonResponse(body, status=400)
                return HttpResponse(f"{field}: {NUL_MESSAGE}", status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


__all__ = ["MAX_JSON_DEPTH", "RefuseNulInQueryMiddleware", "SafeJSONParser", "json_value_problem"]
