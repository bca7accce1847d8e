"""The dashboard reads stored aggregates only: the same number of queries for 6 items as for 300."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from projects import blind
from projects.models import Item, Membership, Response
from tests.dashboard.conftest import annotator_aggregates_create, item_aggregates_create, project_aggregate_create
from tests.factories import MembershipFactory, ProjectFactory


def _larger_project(*, lead, annotators, n_items: int):
    project = ProjectFactory(name="Larger")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for user in annotators:
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=f"bulk-{i}",
                prompt=f"Prompt {i}",
                blind_draw=blind.uniform_draw(seed=project.seed, external_id=f"bulk-{i}"),
                queue_key=blind.queue_key(seed=project.seed, external_id=f"bulk-{i}"),
            )
            for i in range(n_items)
        ]
    )
    Response.objects.bulk_create([Response(item=item, position=p, text="answer") for item in items for p in (0, 1)])
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=annotators)
    project_aggregate_create(project=project, users=annotators)
    return project


def test_page_and_fragment_queries_are_the_same_at_6_and_300_items(
    lead_client, lead, annotator, annotator2, computed_project, dashboard_url, django_assert_num_queries
):
    larger = _larger_project(lead=lead, annotators=[annotator, annotator2], n_items=300)
    assert larger.items.count() == 50 * computed_project.items.count()

    # Every measured request finds the signed-in user in the cache (config.auth), as every request after the first.
    lead_client.get(dashboard_url(computed_project))
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        with CaptureQueriesContext(connection) as small:
            assert lead_client.get(dashboard_url(computed_project), **headers).status_code == 200
        with django_assert_num_queries(len(small.captured_queries)):
            response = lead_client.get(dashboard_url(larger), **headers)
        assert response.status_code == 200
        # Both review lists are full at 300 items yet still one query each.
        assert response.content.decode().count("/review/") >= 10
