"""Fixtures for the LLM clients: a real local OpenAI-compatible server per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_nl2sql.llm import OpenAICompatibleLLM, PlanRequest
from tests.llm.openai_server import OpenAITestServer

API_KEY = "sk-test-3f9a1c0d7e2b4a6f"

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"enum": ["sql", "not_answerable", "clarify"]},
        "sql": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["kind"],
}


@pytest.fixture
def openai_server() -> Iterator[OpenAITestServer]:
    """A started OpenAI-compatible server on 127.0.0.1; stopped after the test."""
    with OpenAITestServer() as server:
        yield server


@pytest.fixture
def plan_request() -> PlanRequest:
    """A typical request: a Chinook question over a two-table shortlist."""
    return PlanRequest(
        question="How many tracks does each genre have?",
        role="analyst",
        schema_text="TABLE Track (TrackId INTEGER, GenreId INTEGER)\nTABLE Genre (GenreId INTEGER, Name TEXT)",
        json_schema=PLAN_SCHEMA,
        case_id="chinook_001",
        datasources=("chinook",),
    )


@pytest.fixture
def make_llm(openai_server: OpenAITestServer) -> Iterator[Callable[..., OpenAICompatibleLLM]]:
    """Build a client for ``openai_server`` with fast retries; keyword arguments override."""
    made: list[OpenAICompatibleLLM] = []

    def make(**overrides: Any) -> OpenAICompatibleLLM:
        kwargs: dict[str, Any] = {
            "price_input_per_1k": 0.5,
            "price_output_per_1k": 1.5,
            "timeout_s": 5.0,
            "max_retries": 2,
            "backoff_s": 0.0,
        }
        kwargs.update(overrides)
        base_url = kwargs.pop("base_url", openai_server.base_url)
        model = kwargs.pop("model", "plan-model")
        api_key = kwargs.pop("api_key", API_KEY)
        llm = OpenAICompatibleLLM(base_url, model, api_key, **kwargs)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()
