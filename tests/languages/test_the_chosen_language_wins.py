"""Which language a page is in: a ?lang= on a study link (kept in the language cookie for the pages that follow),
else the language chosen on the account page, else the browser's Accept-Language, else English. Arabic pages are
right to left; content keeps its own direction (dir="auto"), whatever the interface's."""

from __future__ import annotations

import re

from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotation.crowd.services import study_link_create
from tests.factories import ItemFactory

_HTML = re.compile(r"<html lang=\"([^\"]+)\" dir=\"(\w+)\">")


def _lang_dir(response) -> tuple[str, str]:
    found = _HTML.search(response.content.decode())
    assert found is not None
    return found.group(1), found.group(2)


def test_the_browser_language_picks_the_page_language(db):
    client = Client()
    cases = {"ar": ("ar", "rtl"), "hi-IN,hi;q=0.9": ("hi", "ltr"), "zh-CN,zh;q=0.8": ("zh-hans", "ltr")}
    cases |= {"es-MX": ("es", "ltr"), "fr-FR": ("en", "ltr"), "": ("en", "ltr")}
    for header, expected in cases.items():
        response = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE=header)
        assert _lang_dir(response) == expected, header
    assert "تسجيل الدخول" in client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="ar").content.decode()


def test_a_study_link_with_lang_keeps_the_participant_in_that_language(project, lead):
    link = study_link_create(project=project, created_by=lead, name="hindi", consent_text="नमस्ते")
    client = Client(HTTP_ACCEPT_LANGUAGE="es")
    enter = reverse("study_enter", args=[link.token]) + "?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=t&lang=hi"
    consent = client.get(enter, follow=True)
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "hi"
    assert _lang_dir(consent) == ("hi", "ltr")
    assert "शुरू करने से पहले" in consent.content.decode()
    item_page = client.post(reverse("study_consent", args=[link.token]), {"agree": "yes"}, follow=True)
    html = item_page.content.decode()
    assert _lang_dir(item_page) == ("hi", "ltr"), "the cookie outlives the link's ?lang="
    assert "समर्थन μ" in html
    assert "Support μ" not in html


def test_an_unknown_lang_is_ignored(db):
    client = Client(HTTP_ACCEPT_LANGUAGE="es")
    response = client.get(reverse("login") + "?lang=xx-evil")
    assert _lang_dir(response) == ("es", "ltr")
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies


def test_the_account_page_choice_beats_the_browser(annotator_client):
    page = annotator_client.get(reverse("account"), HTTP_ACCEPT_LANGUAGE="en")
    assert 'value="ar" lang="ar"' in page.content.decode()
    chosen = annotator_client.post(reverse("set_language"), {"language": "ar", "next": reverse("home")})
    assert chosen.status_code == 302
    assert chosen["Location"] == reverse("home")
    home = annotator_client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="en")
    assert _lang_dir(home) == ("ar", "rtl")
    assert "مشاريعك" in home.content.decode()


def test_an_arabic_page_keeps_an_english_prompt_left_to_right(project, annotator_client):
    for item in project.items.all():
        item.prompt = "Which answer is better?" if item.pk % 2 else "أي الإجابتين أفضل؟"
        item.save(update_fields=["prompt"])
    ItemFactory(project=project, prompt="Which answer is better?")
    page = annotator_client.get(reverse("annotate_next", args=[project.pk]), HTTP_ACCEPT_LANGUAGE="ar")
    html = page.content.decode()
    assert _lang_dir(page) == ("ar", "rtl")
    assert 'id="prompt-text" dir="auto"' in html
    responses = re.findall(r'<div class="md response-text"[^>]*>', html)
    assert len(responses) == 2
    assert all('dir="auto"' in tag for tag in responses), responses
    assert 'class="ifs-pad" dir="ltr"' in html, "the triangle is not mirrored"
