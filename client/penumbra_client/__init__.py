"""Penumbra's REST API from Python: ``Penumbra(url, token)``; errors are ``PenumbraError`` with the server's words."""

from penumbra_client.client import FORMATS, Job, Penumbra, Project
from penumbra_client.errors import JobFailed, PenumbraError

__all__ = ["FORMATS", "Job", "JobFailed", "Penumbra", "PenumbraError", "Project"]
