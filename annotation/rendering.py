"""Item text to safe HTML for every page that shows a prompt or a response (the annotator's page, the lead's review).

Response texts are untrusted model output: markdown-it runs with ``html=False`` (raw HTML is shown as text, never
executed) and refuses javascript:/vbscript: links by default. Code blocks and tables scroll inside their card rather
than widening the page, so each becomes a labelled, focusable region: a keyboard user can reach and scroll it (axe's
scrollable-region-focusable), and a screen reader announces what it is.
"""

from __future__ import annotations

import functools
import re

from django.template.loader import render_to_string
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


# A turn longer than this is folded (its first words in the summary) unless it is the last: the turn being answered
# is always open, the earlier ones a click away, so a long dialogue does not push the answers off the screen.
FOLD_AFTER_CHARACTERS = 600
PREVIEW_CHARACTERS = 90


def _role_label(role: str, name: str) -> str:
    labels = {"user": gettext("User"), "assistant": gettext("Assistant"), "tool": gettext("Tool")}
    label = labels.get(role, role)
    return f"{label} · {name}" if name else label


def prompt_render(*, prompt: str, messages: list[dict[str, str]] | None) -> str:
    """The prompt as the page shows it: markdown for a text, a chat for a conversation (projects.conversation).

    Each turn says who speaks; a system prompt is folded in a <details>; long earlier turns are folded; every turn's
    content goes through the same safe markdown as a response.
    """
    if not messages:
        return markdown_render(prompt)
    last = len(messages) - 1
    turns = [
        {
            "role": m["role"],
            "label": _role_label(m["role"], m.get("name", "")),
            "html": markdown_render(m["content"]),
            "folded": index != last and len(m["content"]) > FOLD_AFTER_CHARACTERS,
            "preview": " ".join(m["content"].split())[:PREVIEW_CHARACTERS],
            "name": m.get("name", ""),
        }
        for index, m in enumerate(messages)
    ]
    return render_to_string("annotation/partials/chat.html", {"turns": turns})
