"""The lead's item page says when the votes of a binary item are tied, and names the agreement of its mode."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from aggregation import services
from aggregation.models import AnnotatorAggregate
from projects.models import Membership, Project
from tests.aggregation.conftest import annotate_binary, project_make
from tests.factories import MembershipFactory


def test_tied_votes_are_flagged_on_the_review_page(lead, client):
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=2)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for annotator, weight in zip(annotators, [0.6, 0.3, 0.1], strict=True):
        AnnotatorAggregate.objects.create(
            project=project, annotator=annotator, weight=weight, computed_at=timezone.now()
        )
    annotate_binary(items[0], annotators[0], 0)
    annotate_binary(items[0], annotators[1], 1)
    for annotator in annotators:
        annotate_binary(items[1], annotator, 0)
    services.item_aggregates_recompute(project_id=project.pk)
    client.force_login(lead)

    def page(item):
        url = reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})
        return client.get(url).content.decode()

    tied, agreed = page(items[0]), page(items[1])

    assert "votes tied" in tied
    assert "votes tied" not in agreed
    assert "pairs agreeing" in agreed
    assert "IFS agreement" not in agreed
