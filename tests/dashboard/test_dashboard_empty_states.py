"""What a lead sees before there is anything to show."""

from django.utils import timezone

from projects.models import Project
from tests.factories import MembershipFactory, ProjectFactory


def test_project_without_items_shows_the_import_command(lead_client, lead, dashboard_url):
    project = ProjectFactory(name="Fresh", slug="fresh")
    MembershipFactory(project=project, user=lead, role="lead")
    html = lead_client.get(dashboard_url(project)).content.decode()
    assert "This project has no items yet" in html
    assert "python manage.py import_items fresh items.jsonl" in html
    assert "Agreement among annotators" not in html


def test_project_without_labels_says_so_and_marks_figures_not_computed(lead_client, project, dashboard_url):
    html = lead_client.get(dashboard_url(project)).content.decode()
    assert "No labels yet" in html
    assert "not computed yet" in html
    assert "This project has no items yet" not in html
    assert "No item aggregates yet." in html


def test_computed_project_has_no_empty_notices(lead_client, computed_project, dashboard_url):
    html = lead_client.get(dashboard_url(computed_project)).content.decode()
    assert "No labels yet" not in html
    assert "Agreement figures not computed yet" not in html
    assert "0.540" in html  # alpha interval from the stored aggregate


def test_missing_keys_in_stored_figures_show_as_not_computed(lead_client, computed_project, dashboard_url):
    aggregate = computed_project.aggregate
    aggregate.agreement = {"pairwise_with_ties": {"value": 0.7, "n": 12, "ci": None, "items": 6}}
    aggregate.plots = {"hesitation": {"bins": [0, 1]}}
    aggregate.progress = {"items_total": 6}
    aggregate.save()
    Project.objects.filter(pk=computed_project.pk).update(labelling_started_at=timezone.now())
    response = lead_client.get(dashboard_url(computed_project))
    html = response.content.decode()
    assert response.status_code == 200
    assert "0.700" in html
    assert html.count("not computed yet") >= 4  # the four other agreement figures
