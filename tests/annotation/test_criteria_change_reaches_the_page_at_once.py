"""The page reads a project's criteria from the shared cache; any change of them reaches the next request at once:
through the settings service (whose bulk update sends no per-row signal) and through a direct write of a criterion
(the admin's inline)."""

from __future__ import annotations

import pytest

from annotation.models import JudgmentValue
from projects.models import Criterion
from projects.services import criteria_set
from tests.annotation.conftest import ifs_form, item_url, next_url


def _criteria_on_page(client, project) -> set[int]:
    html = client.get(next_url(project)).content.decode()
    return {criterion.pk for criterion in Criterion.objects.filter(project=project) if f'-{criterion.pk}"' in html}


@pytest.mark.django_db
def test_criteria_set_before_labelling_is_seen_by_the_next_save(annotator_client, project, claimed_item):
    before = set(Criterion.objects.filter(project=project).values_list("pk", flat=True))
    assert _criteria_on_page(annotator_client, project) == before  # the cache now holds them

    criteria_set(project=project, criteria=[("clarity", 0.5), ("accuracy", 0.5)])
    after = set(Criterion.objects.filter(project=project).values_list("pk", flat=True))
    assert after.isdisjoint(before)
    assert _criteria_on_page(annotator_client, project) == after

    response = annotator_client.post(item_url(project, claimed_item), ifs_form(claimed_item))
    assert response.status_code == 302
    saved = set(JudgmentValue.objects.filter(annotation__item=claimed_item).values_list("criterion_id", flat=True))
    assert saved == after


@pytest.mark.django_db
def test_a_criterion_written_directly_is_seen_at_once(annotator_client, project, claimed_item):
    assert _criteria_on_page(annotator_client, project)
    added = Criterion.objects.create(project=project, name="added directly", weight=0.0, position=99)
    assert added.pk in _criteria_on_page(annotator_client, project)
    added.delete()
    assert added.pk not in {c.pk for c in Criterion.objects.filter(project=project)}
    assert _criteria_on_page(annotator_client, project) == set(
        Criterion.objects.filter(project=project).values_list("pk", flat=True)
    )
