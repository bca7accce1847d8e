"""Penumbra's REST API from Python: ``Penumbra(url, token)``; errors are ``PenumbraError`` with the server's words."""

from penumbra_client.client import FORMATS, Job, Penumbra, Project
from penumbra_client.errors import JobFailed, PenumbraError
from penumbra_client.types import ItemRow, LabelRow, PreferenceRow, ResponseRow, SuggestionRow

__all__ = [
    "FORMATS",
    "ItemRow",
    "Job",
    "JobFailed",
    "LabelRow",
    "Penumbra",
    "PenumbraError",
    "PreferenceRow",
    "Project",
    "ResponseRow",
    "SuggestionRow",
]
