"""A lead's review of one item: the item, its responses, every annotator's labels and the aggregate."""

from django.urls import reverse

from annotation.models import Annotation, JudgmentValue
from tests.dashboard.conftest import item_aggregates_create


def _label(*, project, item, user, values):
    annotation = Annotation.objects.create(
        project=project, item=item, annotator=user, mode="ifs", response_order=[1, 0], time_spent_ms=4200
    )
    criterion = project.criteria.get()
    for response, (mu, nu) in zip(item.responses.order_by("position"), values, strict=True):
        JudgmentValue.objects.create(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu)


def test_shows_every_annotators_labels_and_the_aggregate(lead_client, project, annotator, annotator2):
    item = project.items.order_by("id").first()
    _label(project=project, item=item, user=annotator, values=[(700, 100), (200, 600)])
    _label(project=project, item=item, user=annotator2, values=[(150, 650), (800, 50)])
    item_aggregates_create(project=project)

    response = lead_client.get(reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk}))
    html = response.content.decode()

    assert response.status_code == 200
    assert item.prompt in html
    for text in item.responses.values_list("text", flat=True):
        assert text in html
    assert "annotator2" in html
    assert "μ 70 %" in html  # per-mille shown as the sliders' percent
    assert "ν 65 %" in html
    assert "π 20 %" in html  # 1000 − 700 − 100
    assert "p(best ≻ worst)" in html


def test_item_without_labels_or_aggregate_says_so(lead_client, project):
    item = project.items.first()
    html = lead_client.get(
        reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})
    ).content.decode()
    assert "Nobody has labelled this item yet." in html
    assert "aggregate not computed yet" in html
