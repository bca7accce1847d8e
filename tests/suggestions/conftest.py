from __future__ import annotations

import pytest

from suggestions import llm
from tests.suggestions.fake_llm import FakeLLM, start_fake_llm


@pytest.fixture
def fake_llm(settings, monkeypatch) -> FakeLLM:
    """A scripted OpenAI-compatible server on 127.0.0.1 (random port), configured as the LLM endpoint."""
    fake, server = start_fake_llm()
    settings.LLM_BASE_URL = fake.base_url
    settings.LLM_MODEL = "fake-judge"
    settings.LLM_API_KEY = "test-key"
    settings.LLM_TIMEOUT_SECONDS = 1
    settings.LLM_CONCURRENCY = 2
    monkeypatch.setattr(llm, "RETRY_BACKOFF_SECONDS", 0.0)
    yield fake
    server.shutdown()
    server.server_close()
