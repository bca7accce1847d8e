"""The database itself refuses values that are not an IFS, whatever layer tries to write them."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Annotation, JudgmentValue
from tests.factories import ItemFactory, UserFactory


@pytest.fixture
def judgment(project, annotator):
    item = project.items.first()
    annotation = Annotation.objects.create(
        project=project, item=item, annotator=annotator, mode="ifs", response_order=[0, 1]
    )
    return JudgmentValue.objects.create(
        annotation=annotation, response=item.responses.first(), criterion=project.criteria.first(), mu=600, nu=400
    )


@pytest.mark.postgres
@pytest.mark.parametrize(("mu", "nu"), [(601, 400), (-1, 0), (0, -5), (1000, 1)])
def test_update_that_breaks_ifs_fails(judgment, mu, nu):
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentValue.objects.filter(pk=judgment.pk).update(mu=mu, nu=nu)
    judgment.refresh_from_db()
    assert (judgment.mu, judgment.nu) == (600, 400)


@pytest.mark.postgres
def test_bounds_are_inclusive(judgment):
    JudgmentValue.objects.filter(pk=judgment.pk).update(mu=1000, nu=0)
    judgment.refresh_from_db()
    assert (judgment.mu, judgment.nu) == (1000, 0)


@pytest.mark.postgres
def test_one_annotation_per_annotator_and_item(project, annotator):
    item = project.items.first()
    Annotation.objects.create(project=project, item=item, annotator=annotator, mode="ifs", response_order=[0, 1])
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(project=project, item=item, annotator=annotator, mode="ifs", response_order=[1, 0])


@pytest.mark.postgres
def test_external_id_unique_within_project(project):
    existing = project.items.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemFactory(project=project, external_id=existing.external_id)
    # The same id in another project is fine.
    other = ItemFactory(external_id=existing.external_id)
    assert other.pk


@pytest.mark.postgres
def test_likert_value_out_of_range_fails(project):
    user = UserFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(
            project=project,
            item=project.items.first(),
            annotator=user,
            mode="likert",
            response_order=[0, 1],
            likert_value=12,
        )
