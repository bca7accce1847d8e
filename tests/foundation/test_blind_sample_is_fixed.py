"""The blind sample: drawn from a hash, stable across restarts and re-imports, topped up to the minimum,
and frozen once labelling starts."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from projects import blind
from projects.imports.items import items_import
from projects.models import Item, Project
from projects.services import project_create, project_update


def _rows(ids):
    return [json.dumps({"id": i, "prompt": f"p {i}", "responses": ["a", "b"]}) for i in ids]


def test_draw_depends_only_on_seed_and_id():
    first = blind.uniform_draw(seed=7, external_id="x-1")
    assert first == blind.uniform_draw(seed=7, external_id="x-1")
    assert first != blind.uniform_draw(seed=8, external_id="x-1")
    assert 0 <= first < 1
    assert blind.queue_key(seed=7, external_id="x-1") != first


def test_draws_look_uniform():
    draws = [blind.uniform_draw(seed=3, external_id=str(i)) for i in range(4000)]
    share = sum(u < 0.2 for u in draws) / len(draws)
    # Binomial(4000, 0.2) has sd 0.0063: five of them is a bound that a working hash never crosses.
    assert abs(share - 0.2) < 0.032


@given(
    draws=st.lists(st.floats(min_value=0, max_value=0.999999), max_size=60),
    rate=st.floats(min_value=0, max_value=1),
    minimum=st.integers(min_value=0, max_value=30),
)
def test_choice_respects_rate_and_minimum(draws, rate, minimum):
    choice = blind.choose_blind(draws=draws, blind_rate=rate, minimum=minimum)
    chosen = sum(choice.is_blind)
    assert chosen >= min(minimum, len(draws))
    by_rate = [u < rate for u in draws]
    if sum(by_rate) >= minimum:
        assert choice.is_blind == by_rate
    elif draws:
        # Topped up with the smallest draws: nothing blind has a larger draw than something not blind.
        blind_draws = [u for u, flag in zip(draws, choice.is_blind, strict=True) if flag]
        other_draws = [u for u, flag in zip(draws, choice.is_blind, strict=True) if not flag]
        if blind_draws and other_draws:
            assert max(blind_draws) <= min(other_draws)
        assert choice.inclusion_probability == pytest.approx(min(minimum, len(draws)) / len(draws))


@pytest.mark.django_db
def test_same_subset_after_reimport_and_in_another_order(lead):
    ids = [f"q{i}" for i in range(200)]
    first = project_create(name="A", lead=lead, seed=99, blind_rate=0.2, minimum_blind_sample=0)
    items_import(project=first, lines=_rows(ids))
    second = project_create(name="B", lead=lead, seed=99, blind_rate=0.2, minimum_blind_sample=0)
    items_import(project=second, lines=_rows(reversed(ids)))
    blind_first = set(first.items.filter(is_blind=True).values_list("external_id", flat=True))
    blind_second = set(second.items.filter(is_blind=True).values_list("external_id", flat=True))
    assert blind_first == blind_second
    assert 15 < len(blind_first) < 65
    items_import(project=first, lines=_rows(ids), on_duplicate="update")
    assert set(first.items.filter(is_blind=True).values_list("external_id", flat=True)) == blind_first
    assert all(
        p == pytest.approx(0.2)
        for p in first.items.filter(is_blind=True).values_list("blind_inclusion_probability", flat=True)
    )


@pytest.mark.django_db
def test_minimum_tops_up_with_smallest_draws(lead):
    project = project_create(name="Small", lead=lead, seed=5, blind_rate=0.0, minimum_blind_sample=4)
    items_import(project=project, lines=_rows([f"s{i}" for i in range(10)]))
    items = list(project.items.order_by("blind_draw"))
    assert [i.is_blind for i in items] == [True] * 4 + [False] * 6
    assert items[0].blind_inclusion_probability == pytest.approx(0.4)


@pytest.mark.django_db
def test_blind_rate_is_locked_once_labelling_started(lead):
    project = project_create(name="Locked", lead=lead, blind_rate=0.2)
    project_update(project=project, changes={"blind_rate": 0.3})  # fine before labelling
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        project_update(project=project, changes={"blind_rate": 0.5})
    assert "cannot be unseen" in caught.value.message_dict["blind_rate"][0]
    project.refresh_from_db()
    assert project.blind_rate == pytest.approx(0.3)


@pytest.mark.django_db
def test_items_added_after_labelling_keep_existing_flags(lead):
    project = project_create(name="Grow", lead=lead, seed=11, blind_rate=0.3, minimum_blind_sample=0)
    items_import(project=project, lines=_rows([f"g{i}" for i in range(50)]))
    before = dict(project.items.values_list("external_id", "is_blind"))
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    items_import(project=project, lines=_rows([f"h{i}" for i in range(50)]))
    after = dict(project.items.values_list("external_id", "is_blind"))
    assert {k: after[k] for k in before} == before
    new_items = Item.objects.filter(project=project, external_id__startswith="h")
    for item in new_items:
        assert item.is_blind == (item.blind_draw < 0.3)


@pytest.mark.django_db
@pytest.mark.parametrize(("rate", "minimum"), [(0.2, 0), (0.05, 30), (0.0, 500)])
def test_database_redraw_matches_the_reference_rule(lead, rate, minimum):
    project = project_create(name="Ref", lead=lead, seed=3, blind_rate=rate, minimum_blind_sample=minimum)
    items_import(project=project, lines=_rows([f"r{i}" for i in range(300)]))
    rows = list(project.items.order_by("id").values_list("blind_draw", "is_blind", "blind_inclusion_probability"))
    expected = blind.choose_blind(draws=[r[0] for r in rows], blind_rate=rate, minimum=minimum)
    assert [r[1] for r in rows] == expected.is_blind
    assert [r[2] for r in rows if r[1]] == pytest.approx([expected.inclusion_probability] * sum(expected.is_blind))
    assert all(r[2] is None for r in rows if not r[1])
