"""Skip needs a reason; previous goes back through this annotator's history; an earlier label can be edited."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Annotation, Assignment
from tests.annotation.conftest import ifs_form, item_url, next_url


def _skip_url(project, item):
    return reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk})


def test_skip_needs_a_reason_and_is_not_offered_again(project, annotator, annotator_client, claimed_item):
    refused = annotator_client.post(_skip_url(project, claimed_item), {"skip_reason": "other", "skip_other": " "})
    assert refused.status_code == 422
    assert "Say why you skip" in refused.content.decode()
    assert Assignment.objects.get(item=claimed_item, annotator=annotator).status == "claimed"
    annotator_client.post(_skip_url(project, claimed_item), {"skip_reason": "other", "skip_other": "Prompt is empty"})
    assignment = Assignment.objects.get(item=claimed_item, annotator=annotator)
    assert assignment.status == "skipped"
    assert assignment.skip_reason == "Prompt is empty"
    html = annotator_client.get(next_url(project)).content.decode()
    assert f'data-item="{claimed_item.pk}"' not in html


def test_previous_walks_back_and_the_label_can_be_edited(project, annotator, annotator_client):
    visited = []
    for _ in range(3):
        html = annotator_client.get(next_url(project)).content.decode()
        item_id = int(html.split('data-item="')[1].split('"')[0])
        item = project.items.get(pk=item_id)
        visited.append(item)
        annotator_client.post(item_url(project, item), ifs_form(item, {0: (400, 400)}))
    previous = reverse("annotate_previous", kwargs={"project_id": project.pk})
    back = annotator_client.get(previous + f"?before={visited[2].pk}")
    assert back["Location"] == item_url(project, visited[1])
    back_again = annotator_client.get(previous + f"?before={visited[1].pk}")
    assert back_again["Location"] == item_url(project, visited[0])
    page = annotator_client.get(item_url(project, visited[0])).content.decode()
    assert 'value="400"' in page
    assert "Save changes" in page
    annotator_client.post(item_url(project, visited[0]), ifs_form(visited[0], {0: (900, 50)}))
    annotation = Annotation.objects.get(item=visited[0], annotator=annotator)
    assert annotation.values.get(response__position=0).mu == 900
    assert annotation.revision_count == 2


def test_previous_from_the_next_page_opens_the_last_item(project, annotator_client, claimed_item):
    annotator_client.post(item_url(project, claimed_item), ifs_form(claimed_item))
    response = annotator_client.get(reverse("annotate_previous", kwargs={"project_id": project.pk}))
    assert response["Location"] == item_url(project, claimed_item)


def test_the_queue_ends_with_a_clear_empty_state(project, annotator, annotator_client):
    project.items.exclude(pk=project.items.first().pk).delete()
    item = project.items.get()
    annotator_client.post(item_url(project, item), ifs_form(item))
    html = annotator_client.get(next_url(project)).content.decode()
    assert "Nothing left for you" in html
    assert "You labelled 1 item" in html
