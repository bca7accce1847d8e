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


def test_p_best_from_one_label_is_withheld_with_its_n(lead_client, project, annotator):
    from aggregation.models import ItemAggregate

    item = project.items.order_by("id").first()
    _label(project=project, item=item, user=annotator, values=[(950, 0), (0, 950)])
    item_aggregates_create(project=project)
    ItemAggregate.objects.filter(item=item).update(n_annotators=1, p_best=0.95)
    url = reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})

    one = lead_client.get(url).content.decode()
    ItemAggregate.objects.filter(item=item).update(n_annotators=2)
    two = lead_client.get(url).content.decode()

    kpi = one.split('id="p-best"')[1].split("</div>")[0]
    assert "0.95" not in kpi
    assert "needs 2 labels (1 so far)" in kpi
    assert '>1</span><span class="dash-kpi-label">annotator ·' in one
    assert "0.95" in two.split('id="p-best"')[1].split("</div>")[0]
    assert "n = 2" in two
