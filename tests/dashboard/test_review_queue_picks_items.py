"""The review queue: the most hesitant items, and confident items on which annotators still disagree."""

from aggregation.selectors import CONFIDENT_HESITATION_MAX, DISAGREEMENT_AGREEMENT_BELOW, review_queue_get
from tests.dashboard.conftest import item_aggregates_create


def test_lists_pick_the_right_items(project):
    # (hesitation, agreement) per item, in id order.
    figures = [
        (0.90, 0.80),  # 0: most hesitant
        (0.05, 0.20),  # 1: confident, strong disagreement
        (0.60, 0.30),  # 2: hesitant and disagreeing: hesitant list only
        (0.10, 0.50),  # 3: confident, disagreement
        (0.08, 0.95),  # 4: confident and agreeing: no disagreement to review
        (None, None),  # 5: not aggregated (one annotator): never listed
    ]
    item_aggregates_create(project=project, figures=figures)
    items = list(project.items.order_by("id"))

    queue = review_queue_get(project=project, limit=3)

    assert [a.item_id for a in queue.high_hesitation] == [items[0].pk, items[2].pk, items[3].pk]
    assert [a.item_id for a in queue.confident_disagreement] == [items[1].pk, items[3].pk]
    for aggregate in queue.confident_disagreement:
        assert aggregate.hesitation <= CONFIDENT_HESITATION_MAX
        assert aggregate.agreement < DISAGREEMENT_AGREEMENT_BELOW


def test_items_with_one_annotator_are_not_called_disagreements(project):
    aggregates = item_aggregates_create(project=project, figures=[(0.05, 0.1)] * 6)
    aggregates[0].n_annotators = 1
    aggregates[0].save(update_fields=["n_annotators"])
    queue = review_queue_get(project=project)
    assert aggregates[0].item_id not in [a.item_id for a in queue.confident_disagreement]
    assert len(queue.confident_disagreement) == 5


def test_dashboard_links_each_listed_item_to_its_review_page(lead_client, computed_project, dashboard_url):
    html = lead_client.get(dashboard_url(computed_project)).content.decode()
    queue = review_queue_get(project=computed_project)
    for aggregate in queue.high_hesitation + queue.confident_disagreement:
        assert f"/projects/{computed_project.pk}/items/{aggregate.item_id}/review/" in html
