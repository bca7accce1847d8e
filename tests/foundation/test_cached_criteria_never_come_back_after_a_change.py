"""A change of criteria leaves a tombstone in the shared cache that no reader writes over: a request that read the
old rows before the change committed cannot put them back (it only ever adds), and every reader meanwhile gets the
rows. With the fast paths off nothing is cached at all."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings

from projects.models import Criterion, Project
from projects.selectors import CRITERIA_TOMBSTONE, criteria_cache_key, project_criteria

pytestmark = pytest.mark.fast_paths


def _fresh(project: Project) -> Project:
    return Project.objects.get(pk=project.pk)


@pytest.fixture(autouse=True)
def _empty_cache(project):
    cache.clear()  # the project's set-up wrote its criteria, which left tombstones
    yield
    cache.clear()


@pytest.mark.django_db(transaction=True)
def test_a_change_leaves_a_tombstone_that_readers_do_not_overwrite(project):
    key = criteria_cache_key(project.pk)
    before = [c.name for c in project_criteria(_fresh(project))]
    assert [c.name for c in cache.get(key)] == before

    criterion = Criterion.objects.filter(project=project).first()
    criterion.name = "renamed"
    criterion.save()
    assert cache.get(key) == CRITERIA_TOMBSTONE

    # A reader that had the old rows in hand adds them, as every reader does: the tombstone wins.
    stale = [Criterion(pk=c.pk, project=project, name=c.name, weight=c.weight) for c in Criterion.objects.all()]
    stale[0].name = before[0]
    assert cache.add(key, stale) is False
    # A reader now gets the rows and leaves the tombstone where it is.
    assert "renamed" in [c.name for c in project_criteria(_fresh(project))]
    assert cache.get(key) == CRITERIA_TOMBSTONE


@pytest.mark.django_db(transaction=True)
def test_once_the_tombstone_is_gone_the_rows_are_cached_again(project):
    key = criteria_cache_key(project.pk)
    Criterion.objects.filter(project=project).first().save()
    assert cache.get(key) == CRITERIA_TOMBSTONE
    cache.delete(key)  # as its expiry would
    names = [c.name for c in project_criteria(_fresh(project))]
    assert [c.name for c in cache.get(key)] == names


@pytest.mark.django_db
def test_with_the_fast_paths_off_nothing_is_cached(project, django_assert_num_queries):
    with override_settings(FAST_PATHS=False):
        for _ in range(2):
            with django_assert_num_queries(1):
                assert project_criteria(_fresh_without_query(project))
    assert cache.get(criteria_cache_key(project.pk)) is None


def _fresh_without_query(project: Project) -> Project:
    return Project(pk=project.pk)
