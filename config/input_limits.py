"""The edge's rules for text and numbers, and the limits every request passes before any view sees it, so hostile
input gets a clear 4xx instead of reaching PostgreSQL (which refuses NUL in text with an exception), Python's int
parser (which refuses more than 4,300 digits with an exception) or its recursive JSON decoder.

One rule for text (``text_problem``): C0 control characters and DEL are refused everywhere, NUL first among them,
and so are unpaired surrogates (a JSON ``"\\ud800"`` decodes to one, and no UTF-8 encoder takes it); tab, newline and
carriage return are allowed only where multi-line text is (``multiline=True``: prompts, comments, guidelines), never
in a name, an id, a token, a query parameter or a URL path. A refusal is a 422 naming the field.

One rule for numbers (``number_text_problem``): a number typed as text is refused past ``MAX_NUMBER_CHARS``
characters before anything parses it.

Where the rules apply:

- ``SafeJSONParser`` (DRF's JSON parser): a size limit (DATA_UPLOAD_MAX_MEMORY_SIZE), a nesting limit
  (MAX_JSON_DEPTH, a 400) and the text rule over every key and string, answered 422 with the field's path
  (``criteria.0.name``). ``SafeFormParser`` and ``SafeMultiPartParser`` do the same for the API's form bodies.
- ``RefuseControlCharactersMiddleware``: the URL path, every query parameter, and the fields of a page's form POST
  (multi-line allowed: the middleware cannot know which field is a textarea; single-line fields add the validator).
- ``SingleLineTextValidator`` / ``TextValidator``: the same rule as a Django/DRF validator for form and serializer
  fields; import rows ask ``json_value_problem``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deconstruct import deconstructible
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

MAX_JSON_DEPTH = 32
# Far more than any real figure needs (a float's repr is at most 24 characters), far less than Python's 4,300-digit
# int limit.
MAX_NUMBER_CHARS = 40
NUL = "\x00"
NUL_MESSAGE = "NUL characters (\\u0000) are not allowed in text."
DEPTH_MESSAGE = f"JSON nested deeper than {MAX_JSON_DEPTH} levels."
NUMBER_MESSAGE = f"A number is at most {MAX_NUMBER_CHARS} characters long."

# C0 controls but tab, newline and CR; DEL; lone surrogates (only reachable through escapes or surrogateescape).
_NEVER = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff"
_MULTILINE_REFUSED = re.compile(f"[{_NEVER}]")
_SINGLE_LINE_REFUSED = re.compile(f"[{_NEVER}\t\n\r]")


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Why ``value`` may not be stored as text (a control character, or a line break in one-line text); None if
    fine. The one rule every entry point applies."""
    match = (_MULTILINE_REFUSED if multiline else _SINGLE_LINE_REFUSED).search(value)
    if match is None:
        return None
    char = match.group()
    if char == NUL:
        return NUL_MESSAGE
    if "\ud800" <= char <= "\udfff":
        return f"An unpaired surrogate (\\u{ord(char):04x}) is not text."
    if char in "\t\n\r":
        return f"This field is one line: tabs and line breaks (\\u{ord(char):04x}) are not allowed."
    return f"Control characters (\\u{ord(char):04x}) are not allowed in text."


def number_text_problem(raw: str) -> str | None:
    """Why ``raw`` is refused before it is parsed as a number (too long); None if it may be parsed."""
    return NUMBER_MESSAGE if len(raw.strip()) > MAX_NUMBER_CHARS else None


_WHOLE = re.compile(f"[0-9]{{1,{MAX_NUMBER_CHARS}}}")


def whole_number(raw: str) -> int | None:
    """``raw`` (stripped) as a non-negative whole number, or None: ASCII digits only (``str.isdigit`` also takes "²",
    which ``int`` refuses) and at most MAX_NUMBER_CHARS of them, checked before ``int`` sees them."""
    text = raw.strip()
    return int(text) if _WHOLE.fullmatch(text) else None


@deconstructible
class TextValidator:
    """The text rule as a field validator (Django forms and models, DRF serializers alike)."""

    def __init__(self, *, multiline: bool = False) -> None:
        self.multiline = multiline

    def __call__(self, value: Any) -> None:
        if isinstance(value, str) and (problem := text_problem(value, multiline=self.multiline)) is not None:
            raise DjangoValidationError(problem, code="control_character")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextValidator) and other.multiline == self.multiline

    def __hash__(self) -> int:
        return hash(self.multiline)


single_line = TextValidator(multiline=False)
multi_line = TextValidator(multiline=True)


class TextRuleForm(forms.Form):
    """A form whose text fields follow the text rule: a textarea is multi-line, any other text field one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if isinstance(field, forms.CharField):
                field.validators.append(multi_line if isinstance(field.widget, forms.Textarea) else single_line)


class UnprocessableText(ApiValidationError):
    """A control character in a request: 422, in the API's error shape, naming the field."""

    status_code = 422


def _key_name(key: Any) -> str:
    # The field is named in the answer, so a hostile key cannot smuggle its control characters back out.
    return _SINGLE_LINE_REFUSED.sub("?", str(key))


def json_text_problem(value: Any) -> tuple[str, str] | None:
    """(dotted path of the field, why) for the first key or string of decoded JSON that breaks the text rule (line
    breaks allowed: the parser does not know which strings are one-line; serializers add that); None if fine.
    Iterative, so a deep value cannot exhaust the stack here either."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        current, path = stack.pop()
        if isinstance(current, dict | list):
            children = current.items() if isinstance(current, dict) else enumerate(current)
            for key, child in children:
                where = f"{path}.{_key_name(key)}" if path else _key_name(key)
                if isinstance(key, str) and (problem := text_problem(key, multiline=True)) is not None:
                    return where, problem
                stack.append((child, where))
        elif isinstance(current, str) and (problem := text_problem(current, multiline=True)) is not None:
            return path or "non_field_errors", problem
    return None


def json_depth_problem(value: Any) -> str | None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict | list):
            if depth > MAX_JSON_DEPTH:
                return DEPTH_MESSAGE
            stack.extend((child, depth + 1) for child in (current.values() if isinstance(current, dict) else current))
    return None


def _json_value_clean(value: Any) -> bool:
    """True if ``value`` is shallow enough and every key and string keeps the multi-line text rule: one walk and one
    search over all the texts joined by a line break (itself allowed), without the paths that only a refusal needs.
    False means "look closer", not "refused"."""
    texts: list[str] = []
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            if depth > MAX_JSON_DEPTH:
                return False
            texts.extend(current)
            children: Any = current.values()
        elif isinstance(current, list):
            if depth > MAX_JSON_DEPTH:
                return False
            children = current
        else:
            if isinstance(current, str):
                texts.append(current)
            continue
        for child in children:
            if isinstance(child, str):
                texts.append(child)
            elif isinstance(child, dict | list):
                stack.append((child, depth + 1))
    try:
        return _MULTILINE_REFUSED.search("\n".join(texts)) is None
    except TypeError:  # a key that is not a string (not from a JSON decoder): the full walk judges it
        return False


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` (decoded JSON, e.g. an import row) cannot be stored: too deep, or a key or string breaking the
    text rule (named by its path); None if fine."""
    # Import rows come by the hundred thousand and nearly all are fine: the quick check clears them.
    if _json_value_clean(value):
        return None
    if (problem := json_depth_problem(value)) is not None:
        return problem
    if (found := json_text_problem(value)) is not None:
        return f"{found[0]}: {found[1]}"
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
        if (problem := json_depth_problem(data)) is not None:
            raise ParseError(problem)
        if (found := json_text_problem(data)) is not None:
            raise UnprocessableText({found[0]: [found[1]]})
        return data


def _form_problem(data: Any) -> tuple[str, str] | None:
    """The text rule over a form's QueryDict (names one-line, values multi-line) and its uploads' file names."""
    for name, values in data.lists():
        if (problem := text_problem(name)) is not None:
            return _key_name(name), problem
        for value in values:
            if isinstance(value, str) and (problem := text_problem(value, multiline=True)) is not None:
                return name, problem
            file_name = getattr(value, "name", None)
            if isinstance(file_name, str) and (problem := text_problem(file_name)) is not None:
                return name, problem
    return None


class SafeFormParser(FormParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        if (found := _form_problem(data)) is not None:
            raise UnprocessableText({found[0]: [found[1]]})
        return data


class SafeMultiPartParser(MultiPartParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        for part in (parsed.data, parsed.files):
            if (found := _form_problem(part)) is not None:
                raise UnprocessableText({found[0]: [found[1]]})
        return parsed


def _refusal(request: HttpRequest, field: str, problem: str) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": "Invalid input.", "errors": {field: [problem]}}, status=422)
    return HttpResponse(f"{field}: {problem}", status=422, content_type="text/plain; charset=utf-8")


_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class RefuseControlCharactersMiddleware:
    """The text rule on the URL path, the query string and (for pages; the API's parsers do their own) form POSTs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (problem := text_problem(request.path_info)) is not None:
            return _refusal(request, "path", problem)
        for name, values in request.GET.lists():
            for text in (name, *values):
                if (problem := text_problem(text)) is not None:
                    return _refusal(request, _key_name(name), problem)
        if (
            request.method == "POST"
            and not request.path_info.startswith("/api/")
            and request.content_type in _FORM_TYPES
            and (found := _form_problem(request.POST) or _form_problem(request.FILES)) is not None
        ):
            return _refusal(request, *found)
        return self.get_response(request)


__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_NUMBER_CHARS",
    "RefuseControlCharactersMiddleware",
    "SafeFormParser",
    "SafeJSONParser",
    "SafeMultiPartParser",
    "TextRuleForm",
    "TextValidator",
    "UnprocessableText",
    "json_text_problem",
    "json_value_problem",
    "multi_line",
    "number_text_problem",
    "single_line",
    "text_problem",
    "whole_number",
]


class StrictFloatField(serializers.FloatField):
    """A number as JSON writes one: DRF's FloatField also takes the text "0.5" and true (as 1.0), which hides a
    client's bug and lets one request mean two things."""

    default_error_messages = {"invalid": "Expected a JSON number (not text, true or false)."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return float(super().to_internal_value(data))


class StrictIntegerField(serializers.IntegerField):
    """A whole JSON number: DRF's IntegerField also takes "3", 3.0 and true."""

    default_error_messages = {"invalid": "Expected a whole JSON number (not text, a fraction, true or false)."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))
