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
    # A code block is a labelled region the keyboard reaches, since it scrolls sideways inside the card.
    assert (
        '<pre tabindex="0" role="region" aria-label="Code, scrolls sideways"><code class="language-python">for i'
        in html
    )
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


def test_only_markdown_tables_and_code_become_scrollable_regions(project, annotator_client):
    """A literal <pre> or <table> in a response stays text: the region attributes go on markdown's own blocks only."""
    item = ItemFactory(
        project=project,
        responses=["<pre>raw</pre> <table><tr><td>raw</td></tr></table>", "| a | b |\n|---|---|\n| 1 | 2 |"],
    )
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert "&lt;pre&gt;raw&lt;/pre&gt;" in html
    assert "&lt;table&gt;" in html
    assert html.count('<div class="table-scroll" tabindex="0" role="region"') == 1
    assert html.count("</table></div>") == 1
