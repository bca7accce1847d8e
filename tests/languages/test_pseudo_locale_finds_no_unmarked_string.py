"""Every visible string of the annotator's and the participant's pages goes through the translation catalog.

The pages are rendered in a test-only pseudo-locale whose every msgstr is its msgid wrapped in ⟦…⟧
(tests/languages/catalogs.py). Whatever letters are left on a page once the wrapped spans are taken out escaped
marking, and the test names them. Content from data is written without letters (★, digits) so it cannot hide
one; keyboard keys (<kbd>), times (<time>) and text in a declared other language (lang="…": the language menu)
are not interface text. Attributes people read (title, aria-label, placeholder, alt) are checked too.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.crowd.services import study_link_create
from projects.models import Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.languages.catalogs import CLOSE, OPEN, PSEUDO, pseudo_locale_write

pytestmark = pytest.mark.django_db
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")
NOT_INTERFACE_TEXT = {"kbd", "time", "script", "style", "code"}
_WRAPPED = re.compile(re.escape(OPEN) + "[^" + OPEN + CLOSE + "]*" + re.escape(CLOSE))
#: The product's name and the judgment's symbols read the same in every language.
_SAME_EVERYWHERE = re.compile(r"Penumbra|[μνπ]")


class _Text(HTMLParser):
    """The page's reader-visible text, one string (so a wrapped sentence with tags inside stays whole), and the
    read attributes one by one."""

    VOID = {"br", "hr", "img", "input", "link", "meta", "source", "wbr", "area", "base", "col", "embed", "track"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.attributes: list[str] = []
        self.skipping: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        self.attributes += [f"{tag}[{name}]={values[name]}" for name in READ_ATTRIBUTES if values.get(name)]
        if tag in self.VOID:
            return
        if self.skipping or tag in NOT_INTERFACE_TEXT or ("lang" in values and tag != "html"):
            self.skipping.append(tag)

    def handle_endtag(self, tag):
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.text.append(data)


def _leftover(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _WRAPPED.sub(" ", text)
    return _SAME_EVERYWHERE.sub(" ", text)


def unmarked(html: str) -> list[str]:
    """The spans of letters the catalog did not wrap, with a little context."""
    parser = _Text()
    parser.feed(html)
    found = []
    rest = _leftover("".join(parser.text))
    found += [m.group(0).strip() for m in re.finditer(r".{0,20}[^\W\d_].{0,20}", rest)]
    for attribute in parser.attributes:
        name, _, value = attribute.partition("=")
        if re.search(r"[^\W\d_]", _leftover(value)):
            found.append(f"{name}: {value}")
    return found


@pytest.fixture
def pseudo(settings, tmp_path):
    pseudo_locale_write(tmp_path)
    settings.LANGUAGES = [*settings.LANGUAGES, (PSEUDO, "Pseudo")]
    settings.LOCALE_PATHS = [tmp_path]
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def world(db):
    """Projects in the three modes whose data has no letters, an annotator, a lead, a suggestion and guidelines."""
    lead, annotator = UserFactory(username="1001"), UserFactory(username="1002")
    projects = {}
    for mode in (Project.Mode.IFS, Project.Mode.BINARY, Project.Mode.LIKERT):
        project = ProjectFactory(
            name=f"★ {len(projects) + 1}",
            mode=mode,
            guidelines="☆ 1 ☆",
            criteria=[("◆", 0.5), ("◇", 0.5)],
            suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL,
            blind_rate=0,
            overlap=2,
        )
        MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
        MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
        for n in range(3):
            item = ItemFactory(
                project=project, external_id=f"{mode[:1]}{n}", prompt=f"✦ {n} ✦", responses=["♦ 1", "♣ 2"]
            )
            item.external_id = f"{n}{n}"
            item.save(update_fields=["external_id"])
            SuggestionFactory(item=item, preferred_position=1, rationale="☂ 1", values=[(200, 600), (800, 100)])
        projects[mode] = project
    return {"lead": lead, "annotator": annotator, "projects": projects}


def _client(user=None) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=PSEUDO)
    if user is not None:
        client.force_login(user, backend="config.auth.CachedModelBackend")
    return client


def _page(client: Client, url: str, method: str = "get", **data) -> str:
    response = getattr(client, method)(url, data, follow=True)
    assert response.status_code in (200, 400, 403, 422), (url, response.status_code)
    html = response.content.decode()
    assert f'lang="{PSEUDO}"' in html, "the page is not in the pseudo-locale"
    return html


def test_the_annotator_pages_have_no_unmarked_string(pseudo, world):
    client = _client(world["annotator"])
    pages = {"home": _page(client, reverse("home")), "account": _page(client, reverse("account"))}
    for mode, project in world["projects"].items():
        pages[f"{mode} item"] = _page(client, reverse("annotate_next", args=[project.pk]))
        pages[f"{mode} skip refused"] = _page(
            client, reverse("annotate_skip", args=[project.pk, project.items.first().pk]), "post", skip_reason=""
        )
        pages[f"{mode} save refused"] = _page(
            client, reverse("annotate_item", args=[project.pk, project.items.first().pk]), "post", client_token="x"
        )
        pages[f"{mode} done"] = _page(client, reverse("annotate_done", args=[project.pk]))
    for item in world["projects"][Project.Mode.BINARY].items.all():
        _page(client, reverse("annotate_skip", args=[item.project_id, item.pk]), "post", skip_reason="other 1")
    pages["queue empty"] = _page(client, reverse("annotate_next", args=[item.project_id]))
    pages["done list"] = _page(client, reverse("annotate_done", args=[item.project_id]))
    assert "✦" in pages["ifs item"], "a real item page"
    assert OPEN + "Support μ" + CLOSE in pages["ifs item"]
    problems = {name: found for name, html in pages.items() if (found := unmarked(html))}
    assert not problems, problems


def test_the_login_pages_have_no_unmarked_string(pseudo, world):
    client = _client()
    pages = {
        "login": _page(client, reverse("login")),
        "login refused": _page(client, reverse("login"), "post", username="1002", password="wrong"),
        "invitation": _page(client, reverse("password_reset_confirm", args=["MQ", "set-password"])),
    }
    problems = {name: found for name, html in pages.items() if (found := unmarked(html))}
    assert not problems, problems


def test_the_participant_pages_have_no_unmarked_string(pseudo, world):
    project = world["projects"][Project.Mode.IFS]
    link = study_link_create(
        project=project, created_by=world["lead"], name="1", completion_code="777", return_code="888", consent_text="✧"
    )
    enter = reverse("study_enter", args=[link.token])
    client = _client()
    pages = {
        "refused": _page(client, enter),
        "consent": _page(client, enter + "?PROLIFIC_PID=4242&STUDY_ID=1&SESSION_ID=2"),
        "consent refused": _page(client, reverse("study_consent", args=[link.token]), "post"),
    }
    pages["item"] = _page(client, reverse("study_consent", args=[link.token]), "post", agree="yes")
    pages["return"] = _page(client, reverse("study_return", args=[link.token]))
    pages["end"] = _page(client, reverse("study_return", args=[link.token]), "post")
    assert "✦" in pages["item"], "the participant reached an item"
    assert "888" in pages["end"], "and the end page with the return code"
    problems = {name: found for name, html in pages.items() if (found := unmarked(html))}
    assert not problems, problems


def test_an_unmarked_string_is_found():
    """The detector itself: a wrapped page passes, a stray English word does not, data without letters is ignored."""
    assert unmarked(f"<p>{OPEN}Save{CLOSE} ★ 12 <kbd>S</kbd> <time>Dec. 5</time></p>") == []
    assert unmarked(f"<p>{OPEN}You labelled <b>3</b> items{CLOSE}</p>") == []
    assert unmarked(f'<p title="Help">{OPEN}Save{CLOSE}</p>') == ["p[title]: Help"]
    assert unmarked(f"<p>{OPEN}Save{CLOSE} changes</p>")
