"""One JSON error shape for the API: {"detail": "...", "errors": {"field": ["message", ...]}}.

Services raise Django's ValidationError; clients should see it as a 400 with the same field names.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            exc = exceptions.ValidationError(exc.message_dict)
        else:
            exc = exceptions.ValidationError({"non_field_errors": exc.messages})
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, RequestDataTooBig):
        # Django's own answer would be an HTML page; an API client should get the same JSON as for any bad input.
        exc = exceptions.ValidationError({"non_field_errors": [str(exc) or "The request body is too large."]})
        exc.status_code = 413
    elif isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        exc = exceptions.ValidationError({"non_field_errors": ["The request has too many fields or files."]})
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        errors = data if isinstance(data, dict) else {"non_field_errors": data}
        response.data = {"detail": "Invalid input.", "errors": errors}
    elif isinstance(data, dict) and "detail" in data:
        response.data = {"detail": str(data["detail"]), "errors": {}}
    return response


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An API address that matches no route (a negative id, a typo) answers in the API's JSON shape too."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found.", "errors": {}}, status=404)
    return page_not_found(request, exception)
