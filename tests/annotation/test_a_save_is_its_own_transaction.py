"""The save opens its own (durable) transaction: a caller cannot fold it into a larger one, where a later failure
would roll back a label the person was told was saved; and a refused save leaves nothing behind."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Annotation, Assignment
from annotation.saving import SaveRequest
from annotation.services import annotation_save, annotation_save_and_claim_next


def _full(item, mu=600, nu=200):
    return [
        {"response": r.position, "criterion": c.name, "mu": mu, "nu": nu}
        for r in item.responses.all()
        for c in item.project.criteria.all()
    ]


@pytest.mark.django_db(transaction=True)
def test_a_save_inside_another_transaction_is_refused_and_writes_nothing(project, annotator, claimed_item):
    save = SaveRequest(values=_full(claimed_item))
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        annotation_save(project=project, item=claimed_item, annotator=annotator, save=save)
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        annotation_save_and_claim_next(
            project=project, item=claimed_item, annotator=annotator, save=save, claim_next=True
        )
    assert not Annotation.objects.filter(item=claimed_item).exists()
    annotation_save(project=project, item=claimed_item, annotator=annotator, save=save)
    assert Annotation.objects.filter(item=claimed_item, annotator=annotator).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_refused_save_and_next_claims_nothing(project, annotator, claimed_item):
    claims = set(Assignment.objects.values_list("pk", "status"))
    with pytest.raises(ValidationError):
        annotation_save_and_claim_next(
            project=project,
            item=claimed_item,
            annotator=annotator,
            save=SaveRequest(values=_full(claimed_item)[:-1]),
            claim_next=True,
        )
    assert set(Assignment.objects.values_list("pk", "status")) == claims
    assert not Annotation.objects.exists()


def test_a_save_request_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SaveRequest().reason = "resolution"  # type: ignore[misc]
