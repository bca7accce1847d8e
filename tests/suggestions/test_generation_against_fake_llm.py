"""Generating suggestions against a scripted OpenAI-compatible server on loopback (the real HTTP client)."""

from __future__ import annotations

import pytest

from projects.models import Job, Suggestion, SuggestionValue
from suggestions.services import suggestion_job_start, suggestions_generate
from suggestions.tasks import suggestion_job_run
from tests.factories import ItemFactory, SuggestionFactory
from tests.suggestions.fake_llm import answer, good, slow, status

pytestmark = pytest.mark.django_db

GOOD = good(2, [(0.2, 0.7), (0.85, 0.1)], rationale="Response 2 answers the question.")


def _item(project, marker: str):
    return ItemFactory(project=project, prompt=f"[{marker}] Which is better?")


def test_a_good_answer_is_stored_with_its_values(project, fake_llm):
    item = _item(project, "good")
    fake_llm.script("[good]", [GOOD])

    counts = suggestions_generate(project=project, item_ids=[item.pk])

    suggestion = Suggestion.objects.get(item=item)
    assert counts == {"ok": 1, "failed": 0, "skipped": 0}
    assert suggestion.status == Suggestion.Status.OK
    assert suggestion.source == Suggestion.Source.GENERATED
    assert suggestion.preferred_position == 1
    assert suggestion.model_name == "fake-judge"
    assert suggestion.rationale == "Response 2 answers the question."
    values = dict(SuggestionValue.objects.filter(suggestion=suggestion).values_list("response__position", "mu"))
    assert values == {0: 200, 1: 850}
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer test-key"
    assert request["body"]["model"] == "fake-judge"
    assert "Response 2:" in request["text"]


@pytest.mark.parametrize(
    ("marker", "steps", "reason"),
    [
        ("malformed", [answer("{'preferred': 1,")], "not valid JSON"),
        ("overlimit", [good(1, [(0.7, 0.4), (0.1, 0.8)])], "more than 1"),
        ("unknown", [good(3, [(0.7, 0.2), (0.1, 0.8)])], "names no response"),
        ("missing", [answer({"preferred": 1, "ifs": [{"mu": 0.5, "nu": 0.1}, {"mu": 0.1, "nu": 0.5}]})], "lacks"),
        ("server", [status(500)], "HTTP 500"),
        ("slow", [slow(1.6, GOOD.content)], "timeout"),
    ],
)
def test_a_bad_answer_is_retried_then_recorded_as_failed_never_as_a_label(project, fake_llm, marker, steps, reason):
    item = _item(project, marker)
    fake_llm.script(f"[{marker}]", steps)

    counts = suggestions_generate(project=project, item_ids=[item.pk])

    suggestion = Suggestion.objects.get(item=item)
    assert counts["failed"] == 1
    assert suggestion.status == Suggestion.Status.FAILED
    assert suggestion.preferred_position is None
    assert suggestion.attempts == 3
    assert reason in suggestion.failure_reason
    assert not SuggestionValue.objects.filter(suggestion=suggestion).exists()
    assert fake_llm.calls_for(f"[{marker}]") == 3


def test_a_transient_error_then_a_good_answer_succeeds(project, fake_llm):
    item = _item(project, "flaky")
    fake_llm.script("[flaky]", [status(500), answer("not json"), GOOD])
    suggestions_generate(project=project, item_ids=[item.pk])
    suggestion = Suggestion.objects.get(item=item)
    assert suggestion.status == Suggestion.Status.OK
    assert suggestion.attempts == 3


def test_an_authentication_error_is_not_retried(project, fake_llm):
    item = _item(project, "denied")
    fake_llm.script("[denied]", [status(401)])
    suggestions_generate(project=project, item_ids=[item.pk])
    assert fake_llm.calls_for("[denied]") == 1
    assert "HTTP 401" in Suggestion.objects.get(item=item).failure_reason


def test_requests_respect_the_concurrency_limit_and_the_job_shows_progress(project, fake_llm, settings):
    settings.LLM_CONCURRENCY = 2
    items = [_item(project, f"par{k}") for k in range(6)]
    for k in range(6):
        fake_llm.script(f"[par{k}]", [slow(0.3, GOOD.content)])
    job = Job.objects.create(project=project, kind=Job.Kind.SUGGEST, options={"item_ids": [i.pk for i in items]})

    suggestion_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert fake_llm.max_in_flight == 2
    assert (job.progress_done, job.progress_total) == (6, 6)
    assert Suggestion.objects.filter(item__in=items, status=Suggestion.Status.OK).count() == 6


def test_the_job_runs_after_commit_and_skips_items_that_already_have_a_suggestion(
    project, fake_llm, lead, django_capture_on_commit_callbacks
):
    imported = project.items.order_by("id").first()
    SuggestionFactory(item=imported, preferred_position=0, model_name="imported-model")
    with django_capture_on_commit_callbacks(execute=True):
        job = suggestion_job_start(project=project, user=lead)

    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert job.result == {"ok": 5, "failed": 0, "skipped": 1}
    assert Suggestion.objects.get(item=imported).model_name == "imported-model"
    assert len(fake_llm.requests) == 5

    # Running the same job again (a redelivered task) does nothing more.
    from suggestions.tasks import generate_suggestions

    generate_suggestions(job.pk)
    assert len(fake_llm.requests) == 5


def test_starting_a_job_without_an_endpoint_is_refused(project, lead, settings):
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="No LLM endpoint"):
        suggestion_job_start(project=project, user=lead)
    assert not Job.objects.filter(project=project).exists()
