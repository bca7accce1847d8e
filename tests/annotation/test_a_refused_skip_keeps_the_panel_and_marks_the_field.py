"""A skip refused ("Other" with no words, or too long) comes back with the panel open, "Other" still chosen, the text
as typed and the field marked, and says that nothing was skipped; a good skip goes through."""

from __future__ import annotations

import re

from django.urls import reverse

from annotation.checks import SKIP_REASON_MAX
from annotation.models import Assignment


def _skip_url(project, item):
    return reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk})


def _skip_panel(html: str) -> str:
    return re.search(r'<section id="skip-panel".*?</section>', html, re.S).group(0)


def test_other_without_words_keeps_the_panel_open_and_marks_the_text_field(project, annotator_client, claimed_item):
    refused = annotator_client.post(
        _skip_url(project, claimed_item), {"skip_reason": "other", "skip_other": "  "}, HTTP_HX_REQUEST="true"
    )
    html = refused.content.decode()
    panel = _skip_panel(html)
    assert refused.status_code == 200  # htmx swaps 200s only; the page's status is 422 without htmx
    assert '<section id="skip-panel" class="card skip">' in panel, "open, not hidden"
    assert '<option value="other" selected>' in panel
    assert re.search(r'<input[^>]*id="skip-other"[^>]*aria-invalid="true"', panel)
    assert 'aria-describedby="skip-error"' in panel
    assert 'id="skip-error">Say why you skip' in panel
    assert "Not skipped: say why in the field marked below." in html
    assert "fix the values marked below" not in html
    assert not Assignment.objects.filter(item=claimed_item, status=Assignment.Status.SKIPPED).exists()


def test_a_too_long_reason_comes_back_as_typed(project, annotator_client, claimed_item):
    typed = "x" * (SKIP_REASON_MAX + 1)
    refused = annotator_client.post(_skip_url(project, claimed_item), {"skip_reason": "other", "skip_other": typed})
    assert refused.status_code == 422
    assert f'value="{typed}"' in _skip_panel(refused.content.decode())


def test_the_panel_is_closed_until_asked_for_and_a_good_skip_goes_through(project, annotator_client, claimed_item):
    page = annotator_client.get(reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": claimed_item.pk}))
    assert 'id="skip-panel" class="card skip" hidden' in page.content.decode(), "closed until asked for"
    done = annotator_client.post(_skip_url(project, claimed_item), {"skip_reason": "other", "skip_other": "Empty"})
    assert done.status_code == 302
    assert Assignment.objects.get(item=claimed_item, status=Assignment.Status.SKIPPED).skip_reason == "Empty"
