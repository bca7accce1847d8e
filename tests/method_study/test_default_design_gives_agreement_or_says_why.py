"""The default block size gives every method agreement figures (two people on every item under each method) when the
annotators allow it; when they do not, or the lead picks a block size that does not, the setup page and the report
say which figures are missing and what to change."""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.method_study.design import (
    JUDGES_FOR_AGREEMENT,
    agreement_shortfall,
    default_block_size,
    design_build,
    design_problems,
    overlap_block_size,
)
from tests.factories import ItemFactory, ProjectFactory, UserFactory
from tests.method_study.crossover import crossover_create, members_add


@given(n_methods=st.integers(2, 4), n_annotators=st.integers(2, 12), n_items=st.integers(2, 60))
@settings(max_examples=200, deadline=None)
def test_the_default_design_gives_two_judges_per_item_and_method_whenever_it_can(n_methods, n_annotators, n_items):
    size = default_block_size(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items)
    if design_problems(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items, block_size=size):
        return
    cells = design_build(
        n_methods=n_methods, n_annotators=n_annotators, item_ids=list(range(n_items)), block_size=size, seed=1
    )
    judges = Counter((c.item, c.method) for c in cells)
    assert len(judges) == n_items * n_methods
    shortfall = agreement_shortfall(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items, block_size=size)
    if overlap_block_size(n_methods=n_methods, n_annotators=n_annotators, n_items=n_items) is not None:
        assert min(judges.values()) >= JUDGES_FOR_AGREEMENT
        assert shortfall is None
    else:
        assert min(judges.values()) == 1
        assert shortfall is not None
        assert "Krippendorff's α" in shortfall
        assert "add annotators" in shortfall


def test_a_block_size_without_overlap_says_what_to_use_instead():
    message = agreement_shortfall(n_methods=3, n_annotators=6, n_items=9, block_size=2)
    assert message is not None
    assert "use blocks of 3 items" in message
    assert agreement_shortfall(n_methods=3, n_annotators=6, n_items=9, block_size=3) is None


def _study(*, n_annotators: int, block_size: int | None):
    project = ProjectFactory(name="Design", likert_points=5)
    lead = UserFactory()
    people = [UserFactory() for _ in range(n_annotators)]
    members_add(project, lead=lead, annotators=people)
    items = ItemFactory.create_batch(9, project=project)
    client = Client()
    client.force_login(lead)
    setup = client.get(f"/projects/{project.pk}/method-study/").content.decode()
    crossover_create(project, lead=lead, annotators=people, items=items, block_size=block_size)
    return project, client, setup


@pytest.mark.django_db
def test_too_few_annotators_are_named_on_the_setup_page_the_study_page_and_the_report():
    project, client, setup = _study(n_annotators=3, block_size=None)
    assert 'id="design-shortfall"' in setup
    assert "add annotators: 6 or more for 3 methods" in setup
    for page in (f"/projects/{project.pk}/method-study/", f"/projects/{project.pk}/method-study/report/"):
        html = client.get(page).content.decode()
        assert "Figures this design cannot give:" in html, page
        assert "Krippendorff&#x27;s α and pairwise agreement" in html


@pytest.mark.django_db
def test_enough_annotators_get_the_overlap_by_default_and_no_warning():
    project, client, setup = _study(n_annotators=6, block_size=None)
    assert 'id="design-shortfall"' not in setup
    project.refresh_from_db()
    assert project.method_study.block_size == 3
    for page in (f"/projects/{project.pk}/method-study/", f"/projects/{project.pk}/method-study/report/"):
        assert 'id="design-shortfall"' not in client.get(page).content.decode()
