"""The item review page renders markdown as annotators see it, names responses by stored position and model,
shows each annotator's order and values in percent; the dashboard's review list shows no literal <br />."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Annotation, JudgmentValue
from tests.dashboard.conftest import item_aggregates_create


def _item(project):
    item = project.items.order_by("id").first()
    item.prompt = "Compare these.<br />Which is **better**?"
    item.save(update_fields=["prompt"])
    first, second = item.responses.order_by("position")
    first.text, first.model_name = "Use `numpy`:\n\n- fast\n- tested <script>alert(1)</script>", "gpt-4o"
    second.text, second.model_name = "Plain answer.", "llama-3"
    first.save()
    second.save()
    return item


def test_review_page(lead_client, project, annotator):
    item = _item(project)
    annotation = Annotation.objects.create(
        project=project, item=item, annotator=annotator, mode="ifs", response_order=[1, 0], time_spent_ms=4200
    )
    criterion = project.criteria.get()
    for response, (mu, nu) in zip(item.responses.order_by("position"), [(705, 100), (200, 600)], strict=True):
        JudgmentValue.objects.create(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu)

    html = lead_client.get(reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})).content
    html = html.decode()

    assert "&lt;br" not in html
    assert "<strong>better</strong>" in html
    assert "<code>numpy</code>" in html
    assert "<li>fast</li>" in html
    assert "<script>alert(1)</script>" not in html  # raw HTML in a response stays text
    assert "Response 1 (gpt-4o)" in html
    assert "Response 2 (llama-3)" in html
    assert "1. Response 2 (llama-3)<br>2. Response 1 (gpt-4o)" in html  # the order this annotator saw
    assert "μ 70.5 %" in html
    assert "‰" not in html
    assert "Response 0" not in html
    assert "#0" not in html


def test_dashboard_review_list_has_no_literal_br(lead_client, project):
    _item(project)
    item_aggregates_create(project=project)
    html = lead_client.get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    assert "Compare these. Which is **better**?" in html
    assert "&lt;br" not in html
