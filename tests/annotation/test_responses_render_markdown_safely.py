"""Long model output is readable (markdown, code blocks kept) and never executes (raw HTML shown as text)."""

from __future__ import annotations

from projects.models import Item
from tests.annotation.conftest import item_url
from tests.factories import ItemFactory


def test_markdown_is_rendered_and_html_is_escaped(project, annotator_client):
    item = ItemFactory(
        project=project,
        prompt="Explain <script>alert('p')</script> loops",
        responses=[
            "Use a **for** loop:\n\n```python\nfor i in range(3):\n    print(i)\n```",
            "<img src=x onerror=alert(1)> [click](javascript:alert(2))",
        ],
    )
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert "<strong>for</strong>" in html
    assert '<pre><code class="language-python">for i in range(3):' in html
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'href="javascript:' not in html


def test_literal_br_tags_in_scraped_text_become_line_breaks(project, annotator_client):
    item = ItemFactory(project=project, prompt="First line?<br />Second line <script>x()</script>")
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert "First line?<br />\nSecond line" in html
    assert "&lt;br" not in html
    assert "<script>x()" not in html
