"""Documents the error answers every API operation can give, in the one JSON error shape (config.api_errors).

Views document their successes; the errors come from the framework (authentication, permissions, parsing, the
404 of selectors) and would otherwise be undocumented on every operation.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.request import Request

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "detail": {"type": "string"},
        "errors": {
            "type": "object",
            "additionalProperties": True,
            "description": "Field name -> list of messages (empty unless the input was invalid).",
        },
    },
    "required": ["detail", "errors"],
}
ALWAYS = {
    "401": "Not authenticated.",
    "403": "Not allowed.",
    "404": "Not found, or not visible to this user.",
    "406": "The Accept header asks for a format the API does not produce.",
    # config.input_limits: the path, a query parameter or a body field holds a control character.
    "422": "A control character (NUL, ESC, …) in the path, a query parameter or a field; `errors` names it.",
}
WITH_INPUT = {
    "400": "Invalid input; `errors` names each bad field.",
}
WITH_BODY = {
    "413": "The request body is too large.",
    "415": "Unsupported content type.",
}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["ErrorResponse"] = ERROR_SCHEMA
    reference = {"$ref": "#/components/schemas/ErrorResponse"}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            wanted = dict(ALWAYS)
            if operation.get("parameters") or "requestBody" in operation or method != "get":
                wanted.update(WITH_INPUT)
            if "requestBody" in operation or method in {"post", "put", "patch"}:
                wanted.update(WITH_BODY)
            for status, description in wanted.items():
                operation["responses"].setdefault(
                    status, {"description": description, "content": {"application/json": {"schema": reference}}}
                )
    return result


class ApiDocsView(SpectacularSwaggerSplitView):
    """The Swagger UI page. Its OPTIONS answers the allowed methods: DRF's default OPTIONS renders its metadata with
    the page's HTML renderer, which has no template for it, and answered 500."""

    # A plain HttpResponse on purpose: a DRF Response would go through the HTML renderer that caused the 500.
    def options(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:  # type: ignore[override]
        response = HttpResponse(status=200)
        response["Allow"] = ", ".join(self.allowed_methods)
        return response
