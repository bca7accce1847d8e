"""A suggestion seen cannot be unseen: the blind rate of existing items is frozen once labelling starts."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from projects.models import Item
from projects.services import project_mark_labelling_started, project_update

pytestmark = pytest.mark.django_db


def test_changing_blind_rate_after_labelling_started_is_refused(project):
    before = list(Item.objects.filter(project=project).values_list("id", "is_blind"))
    project_mark_labelling_started(project_id=project.pk)
    project.refresh_from_db()

    with pytest.raises(ValidationError) as refused:
        project_update(project=project, changes={"blind_rate": 0.5})
    assert "blind_rate" in refused.value.message_dict
    project.refresh_from_db()
    assert project.blind_rate == 0.2
    assert list(Item.objects.filter(project=project).values_list("id", "is_blind")) == before


def test_blind_rate_can_change_before_labelling(project):
    project_update(project=project, changes={"blind_rate": 1.0})
    assert set(Item.objects.filter(project=project).values_list("is_blind", flat=True)) == {True}
