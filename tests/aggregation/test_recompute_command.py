"""manage.py recompute brings a project's aggregates up to date, all of it or only what is stale."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from aggregation import services
from aggregation.models import ItemAggregate, ProjectAggregate
from tests.aggregation.conftest import annotate_ifs, project_make


@pytest.mark.django_db
def test_recompute_a_named_project():
    project, items, annotators = project_make(n_items=2, n_annotators=2)
    for item in items:
        annotate_ifs(item, annotators[0], [(800, 100), (100, 800)])
    out = StringIO()

    call_command("recompute", project.slug, stdout=out)

    assert ItemAggregate.objects.filter(project=project).count() == 2
    assert ProjectAggregate.objects.filter(project=project).exists()
    assert f"{project.slug}: 2 item aggregates" in out.getvalue()


@pytest.mark.django_db
def test_recompute_only_stale():
    _, items, annotators = project_make(n_items=2, n_annotators=1)
    annotate_ifs(items[0], annotators[0], [(800, 100), (100, 800)])
    out = StringIO()

    call_command("recompute", "--stale", stdout=out)

    assert services.stale_items_list() == {}
    assert services.stale_projects_list() == []
    assert "1 stale items and 1 stale projects" in out.getvalue()


@pytest.mark.django_db
def test_unknown_project_is_named():
    with pytest.raises(CommandError, match="no-such-project"):
        call_command("recompute", "no-such-project")
