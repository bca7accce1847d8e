"""Item text to safe HTML for every page that shows a prompt or a response (the annotator's page, the lead's review).

Response texts are untrusted model output: markdown-it runs with ``html=False`` (raw HTML is shown as text, never
executed) and refuses javascript:/vbscript: links by default. Code blocks and tables scroll inside their card rather
than widening the page, so each becomes a labelled, focusable region: a keyboard user can reach and scroll it (axe's
scrollable-region-focusable), and a screen reader announces what it is.
"""

from __future__ import annotations

import functools
import re

from django.utils import translation
from django.utils.html import escape
from django.utils.translation import gettext
from markdown_it import MarkdownIt

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")

# Scraped prompts often carry literal <br> tags; they become markdown hard breaks instead of visible tag text.
_BR_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)


def markdown_render(text: str) -> str:
    return _markdown_render(text, translation.get_language() or "")


# A pure function of the text (and of the language of the regions' names), and each item is shown to `overlap`
# annotators (and again on reloads and edits): the process keeps the latest renders instead of parsing again.
@functools.lru_cache(maxsize=512)  # bounded: long responses are tens of kB each
def _markdown_render(text: str, language: str) -> str:
    html = _markdown.render(_BR_TAG.sub("  \n", text))
    # With html=False every "<pre>" and "<table>" in the output is markdown's own: the input's are escaped.
    code = escape(gettext("Code, scrolls sideways"))
    table = escape(gettext("Table, scrolls sideways"))
    html = html.replace("<pre>", f'<pre tabindex="0" role="region" aria-label="{code}">')
    html = html.replace("<table>", f'<div class="table-scroll" tabindex="0" role="region" aria-label="{table}"><table>')
    return html.replace("</table>", "</table></div>")
