"""A label row that names its responses is placed by them: one naming a response the item lacks is refused."""

from __future__ import annotations

import json

import pytest

from annotation.imports.labels import labels_import
from annotation.models import Annotation
from projects.imports.items import ImportRejected, items_import
from projects.models import Project
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def binary_project():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    items_import(project=project, lines=[json.dumps({"id": "q1", "prompt": "Q?", "responses": ["yes", "no"]})])
    return project


def _row(responses, choice=0):
    return json.dumps({"item": "q1", "annotator": "ada", "mode": "binary", "choice": choice, "responses": responses})


def test_a_response_the_item_lacks_is_refused_and_nothing_is_written(binary_project):
    row = _row([{"position": 0, "text": "maybe"}, {"position": 1, "text": "no"}])

    with pytest.raises(ImportRejected) as refused:
        labels_import(project=binary_project, lines=[row])

    assert 'the response at position 0 ("maybe") is not a response of this item' in str(refused.value)
    assert not Annotation.objects.filter(project=binary_project).exists()


def test_the_choice_follows_its_text_to_the_stored_position(binary_project):
    # The file lists "no" first: its choice 0 means "no", stored here at position 1.
    labels_import(
        project=binary_project,
        lines=[_row([{"position": 0, "text": "no", "model": None}, {"position": 1, "text": "yes"}], choice=0)],
    )

    assert Annotation.objects.get(project=binary_project).binary_choice == 1
