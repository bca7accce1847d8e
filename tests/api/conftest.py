from __future__ import annotations

import pytest

from projects.models import Project
from tests.exports.builders import build_labelled_project


@pytest.fixture
def labelled_project(project, annotator, annotator2) -> Project:
    return build_labelled_project(project, [annotator, annotator2])
