"""The "longest-response" baseline prefers the longer response and never overwrites a real suggestion."""

from __future__ import annotations

import pytest

from projects.models import TIE, Suggestion
from suggestions.services import BASELINE_MODEL_NAME, longest_response_suggestions
from tests.factories import ItemFactory, ProjectFactory, SuggestionFactory

pytestmark = pytest.mark.django_db


def test_longest_response_wins_equal_lengths_tie_and_existing_suggestions_stay():
    project = ProjectFactory()
    longer_first = ItemFactory(project=project, responses=["a much longer answer", "short"])
    equal = ItemFactory(project=project, responses=["same", "size"])
    imported = ItemFactory(project=project, responses=["x", "a longer one"])
    SuggestionFactory(item=imported, preferred_position=0, model_name="imported")
    failed = ItemFactory(project=project, responses=["x", "a longer one"])
    SuggestionFactory(item=failed, status="failed", preferred_position=None, failure_reason="timeout")

    assert longest_response_suggestions(project=project) == 3

    by_item = {s.item_id: s for s in Suggestion.objects.filter(item__project=project)}
    assert by_item[longer_first.pk].preferred_position == 0
    assert by_item[longer_first.pk].model_name == BASELINE_MODEL_NAME
    assert by_item[longer_first.pk].source == Suggestion.Source.BASELINE
    assert by_item[equal.pk].preferred_position == TIE
    assert by_item[imported.pk].model_name == "imported"
    assert by_item[failed.pk].status == Suggestion.Status.OK
    assert by_item[failed.pk].preferred_position == 1
    assert longest_response_suggestions(project=project) == 0
