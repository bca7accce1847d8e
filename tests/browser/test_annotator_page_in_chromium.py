"""An annotator uses the page in a real browser: mouse and keyboard on the sliders, the μ + ν ≤ 100 % rule,
save and reload, Accept, no suggestion on a blind item, and the after-label resolution step."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation, AnnotationRevision, SuggestionExposure
from projects.models import Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BLIND_MARKER = "BLINDMARKER-7f3a"


def _project(display: str) -> tuple[Project, object, list]:
    project = ProjectFactory(name=f"Browser {display}", suggestion_display=display, overlap=2)
    annotator = UserFactory(username="ann-browser")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    items = [
        ItemFactory(
            project=project,
            is_blind=False,
            responses=[
                "Paris is the capital of **France**.",
                "The capital is Paris.\n\n```python\nprint('Paris')\n```",
            ],
        )
        for _ in range(3)
    ]
    return project, annotator, items


def _item_url(live_server, project, item) -> str:
    return live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk})


def _value(page, selector: str) -> int:
    return int(page.eval_on_selector(selector, "e => e.value"))


def test_sliders_save_reload_accept_and_blind_item(page, live_server, login, shot):
    project, annotator, items = _project(Project.SuggestionDisplay.BLIND_SAMPLE)
    shown_item, accept_item, blind_item = items
    blind_item.is_blind = True
    blind_item.save(update_fields=["is_blind"])
    for item in items:
        SuggestionFactory(
            item=item,
            preferred_position=1,
            rationale=f"{BLIND_MARKER} rationale" if item == blind_item else "Response with code is clearer.",
            model_name=f"{BLIND_MARKER}-model" if item == blind_item else "visible-llm",
        )
    criterion = project.criteria.get()
    mu0, nu0 = f"#mu-0-{criterion.pk}", f"#nu-0-{criterion.pk}"

    login(page, annotator.username)
    shot(page, "home")
    assert page.locator("text=Start annotating").count() == 1

    page.goto(_item_url(live_server, project, shown_item))
    page.wait_for_selector("#annotate-form")
    assert page.locator("#suggestion-panel").is_visible()
    assert page.locator("pre code").count() == 1, "the code block is kept"
    shot(page, "item-with-suggestion")

    # Mouse: press on the μ slider at about 70 % of its width.
    box = page.locator(mu0).bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    mu_after_drag = _value(page, mu0)
    assert 600 <= mu_after_drag <= 800
    pi_text = page.locator(f"fieldset[data-cell='0-{criterion.pk}'] .pi-out").inner_text()
    assert pi_text == f"{(1000 - mu_after_drag) // 10} %"
    shot(page, "mu-dragged-with-mouse")

    # Keyboard: J moves to the next slider (ν of the same response), arrows adjust by 1 %, Shift by 10 %.
    page.focus(mu0)
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == f"nu-0-{criterion.pk}"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _value(page, nu0) == 20
    for _ in range(6):
        page.keyboard.press("Shift+ArrowRight")
    nu_now, mu_now = _value(page, nu0), _value(page, mu0)
    assert nu_now == 620
    assert mu_now + nu_now == 1000, "μ yielded so that μ + ν stays at 100 %"
    note = page.locator(f"fieldset[data-cell='0-{criterion.pk}'] .yield-note")
    assert note.is_visible()
    assert "μ lowered to 38 %" in note.inner_text()
    assert page.locator(f"fieldset[data-cell='0-{criterion.pk}'] .pi-out").inner_text() == "0 %"
    shot(page, "other-slider-yields")

    # Dragging μ back to the right with the mouse pushes ν down instead.
    box = page.locator(mu0).bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    assert _value(page, mu0) + _value(page, nu0) <= 1000
    assert _value(page, nu0) < 620
    saved_mu, saved_nu = _value(page, mu0), _value(page, nu0)

    page.keyboard.press("s")
    page.wait_for_selector(".notice:has-text('Saved.')")
    shot(page, "saved-next-item")
    annotation = Annotation.objects.get(item=shown_item, annotator=annotator)
    value = annotation.values.get(response__position=0)
    assert (value.mu, value.nu) == (saved_mu, saved_nu)
    assert annotation.suggestion_shown
    assert annotation.time_spent_ms > 0

    page.goto(_item_url(live_server, project, shown_item))
    assert _value(page, mu0) == saved_mu
    assert _value(page, nu0) == saved_nu
    assert page.locator("text=Saved").first.is_visible()
    shot(page, "reloaded-saved-values")

    # Accept on another shown item fills the form from the documented defaults; the annotator saves it.
    page.goto(_item_url(live_server, project, accept_item))
    page.keyboard.press("l")
    page.wait_for_selector(".notice:has-text('Suggestion accepted')")
    assert _value(page, f"#mu-1-{criterion.pk}") == 800
    assert _value(page, f"#nu-0-{criterion.pk}") == 800
    shot(page, "accepted-suggestion")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".notice:has-text('Saved.')")
    accepted = Annotation.objects.get(item=accept_item, annotator=annotator)
    assert accepted.accepted_suggestion
    assert SuggestionExposure.objects.filter(item=accept_item, kind="accept").exists()

    # The blind item: no suggestion anywhere in what the browser received.
    page.goto(_item_url(live_server, project, blind_item))
    page.wait_for_selector("#annotate-form")
    assert page.locator("#suggestion-panel").count() == 0
    assert page.locator("#accept-button").count() == 0
    assert BLIND_MARKER not in page.content()
    shot(page, "blind-item-no-suggestion")
    page.keyboard.press("s")
    page.wait_for_selector(".notice:has-text('Saved.'), .empty")
    page.goto(_item_url(live_server, project, blind_item))
    assert BLIND_MARKER not in page.content()
    assert not SuggestionExposure.objects.filter(item=blind_item).exists()


def test_help_skip_and_previous_by_keyboard(page, live_server, login, shot):
    project, annotator, _items = _project(Project.SuggestionDisplay.BEFORE_LABEL)
    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#annotate-form")
    first_item = int(page.get_attribute("#annotate-frame", "data-item"))
    page.keyboard.press("?")
    assert page.locator("#help-panel").is_visible()
    assert "the other one yields" in page.locator("#help-panel").inner_text()
    shot(page, "help")
    page.keyboard.press("?")
    page.keyboard.press("x")
    assert page.locator("#skip-panel").is_visible()
    shot(page, "skip-panel")
    page.click("#skip-submit")
    page.wait_for_selector(".notice:has-text('Skipped.')")
    assert int(page.get_attribute("#annotate-frame", "data-item")) != first_item
    page.keyboard.press("p")
    # A function, not an expression string: Playwright evals expression strings, which the page's CSP forbids.
    page.wait_for_function(f"() => document.querySelector('#annotate-frame').dataset.item === '{first_item}'")
    assert page.locator("text=You skipped this item").is_visible()
    shot(page, "previous-item")


def test_after_label_resolution_step(page, live_server, login, shot):
    project, annotator, items = _project(Project.SuggestionDisplay.AFTER_LABEL)
    item = items[0]
    SuggestionFactory(item=item, preferred_position=1, rationale="The second answer shows code.", model_name="llm")
    criterion = project.criteria.get()
    login(page, annotator.username)
    page.goto(_item_url(live_server, project, item))
    assert page.locator("#suggestion-panel").count() == 0, "after_label shows nothing first"
    page.fill(f"#mu-0-{criterion.pk}", "900")  # fill() on a range sets its value and fires input
    page.fill(f"#nu-1-{criterion.pk}", "700")
    shot(page, "before-save")
    page.click("#save-button")
    page.wait_for_selector("#suggestion-panel.resolution")
    assert "The second answer shows code." in page.locator("#suggestion-panel").inner_text()
    shot(page, "resolution-step")
    assert SuggestionExposure.objects.filter(item=item, kind="resolution").count() == 1

    page.fill(f"#mu-0-{criterion.pk}", "100")
    page.fill(f"#nu-0-{criterion.pk}", "800")
    page.fill(f"#nu-1-{criterion.pk}", "0")
    page.fill(f"#mu-1-{criterion.pk}", "900")
    page.click("#save-button")
    page.wait_for_selector(".notice:has-text('Saved.')")
    shot(page, "changed-after-resolution")
    revisions = list(AnnotationRevision.objects.filter(annotation__item=item).order_by("number"))
    assert [r.reason for r in revisions] == ["save", "resolution"]
    assert [r.suggestion_shown for r in revisions] == [False, True]


@pytest.mark.parametrize("mode", [Project.Mode.BINARY, Project.Mode.LIKERT])
def test_binary_and_likert_by_keyboard_only(page, live_server, login, shot, mode):
    project = ProjectFactory(name=f"Browser {mode}", mode=mode, likert_points=5, overlap=1)
    annotator = UserFactory(username=f"ann-{mode}")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    item = ItemFactory(project=project, is_blind=False)
    login(page, annotator.username)
    page.goto(_item_url(live_server, project, item))
    page.wait_for_selector("#annotate-form")
    page.keyboard.press("1")
    shot(page, f"{mode}-chosen")
    page.keyboard.press("s")
    page.wait_for_selector(".empty:has-text('Nothing left for you')")
    shot(page, f"{mode}-queue-done")
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    left = annotation.response_order[0]
    if mode == Project.Mode.BINARY:
        assert annotation.binary_choice == left, "key 1 is the left response, stored by its position"
    else:
        assert annotation.likert_value == (1 if left == 0 else 5), "key 1 is 'left much better'"
