"""Labels saved after the figures were computed are announced, so a lead knows the numbers are catching up."""

from datetime import timedelta

from annotation.models import Annotation

BADGE = "new labels: recomputing"


def _label(project, user):
    return Annotation.objects.create(
        project=project, item=project.items.first(), annotator=user, mode="ifs", response_order=[0, 1]
    )


def test_no_badge_without_labels(lead_client, computed_project, dashboard_url):
    assert BADGE not in lead_client.get(dashboard_url(computed_project)).content.decode()


def test_badge_when_a_label_is_newer_than_the_figures(lead_client, computed_project, annotator, dashboard_url):
    annotation = _label(computed_project, annotator)
    aggregate = computed_project.aggregate
    aggregate.source_updated_at = annotation.updated_at - timedelta(seconds=5)
    aggregate.save(update_fields=["source_updated_at"])
    assert BADGE in lead_client.get(dashboard_url(computed_project)).content.decode()


def test_no_badge_once_the_figures_have_seen_the_newest_label(lead_client, computed_project, annotator, dashboard_url):
    annotation = _label(computed_project, annotator)
    aggregate = computed_project.aggregate
    aggregate.source_updated_at = annotation.updated_at
    aggregate.save(update_fields=["source_updated_at"])
    assert BADGE not in lead_client.get(dashboard_url(computed_project)).content.decode()
