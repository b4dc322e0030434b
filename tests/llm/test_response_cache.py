"""OpenAICompatibleLLM with a ResponseCache, and LLMError.kind, against the real local server."""

from __future__ import annotations

import pytest

from pytest_nl2sql.llm import LLMError
from pytest_nl2sql.llm.cache import ResponseCache
from tests.llm.openai_server import OpenAITestServer, ScriptedResponse

PLAN = {"kind": "sql", "sql": "SELECT 1"}


def test_a_cached_answer_is_not_asked_again_and_costs_nothing(openai_server, make_llm, plan_request, tmp_path) -> None:
    openai_server.script(ScriptedResponse(plan=PLAN, usage=(1000, 100)))
    llm = make_llm(cache=ResponseCache(tmp_path))
    fresh = llm.generate_plan(plan_request)
    again = llm.generate_plan(plan_request)
    assert len(openai_server.completion_requests) == 1
    assert fresh.plan == again.plan == PLAN
    assert (fresh.cached, fresh.input_tokens, fresh.cost_usd > 0) == (False, 1000, True)
    assert (again.cached, again.input_tokens, again.output_tokens, again.cost_usd) == (True, 0, 0, 0.0)
    assert (llm.cache.hits, llm.cache.misses, llm.cache.stores) == (1, 1, 1)
    # another attempt (a repeat) is another entry; so is another client's model or parameters
    llm.generate_plan(plan_request, attempt=1)
    make_llm(cache=llm.cache, model="other").generate_plan(plan_request)
    make_llm(cache=llm.cache, params={"temperature": 0.7}).generate_plan(plan_request)
    sent = openai_server.completion_requests
    assert len(sent) == 4 and sent[-1].json["temperature"] == 0.7


def test_an_answer_that_is_no_plan_fails_again_from_the_cache(openai_server, make_llm, plan_request, tmp_path) -> None:
    openai_server.script(ScriptedResponse(content="not json", usage=(10, 10)))
    llm = make_llm(cache=ResponseCache(tmp_path))
    with pytest.raises(LLMError) as first:
        llm.generate_plan(plan_request)
    with pytest.raises(LLMError) as second:
        llm.generate_plan(plan_request)
    assert len(openai_server.completion_requests) == 1
    assert (first.value.kind, first.value.cached, first.value.cost_usd > 0) == ("response", False, True)
    assert (second.value.kind, second.value.cached, second.value.cost_usd) == ("response", True, 0.0)


def test_failures_to_reach_the_server_are_never_cached_and_say_their_kind(make_llm, plan_request, tmp_path) -> None:
    server = OpenAITestServer().start()
    url = server.base_url
    server.stop()
    cache = ResponseCache(tmp_path)
    llm = make_llm(base_url=url, max_retries=0, cache=cache)
    with pytest.raises(LLMError) as down:
        llm.generate_plan(plan_request)
    assert down.value.kind == "connection" and cache.stats()["entries"] == 0


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (403, "auth"), (429, "rate_limit"), (503, "server"), (404, "request")])
def test_status_errors_say_their_kind(openai_server, make_llm, plan_request, status, kind) -> None:
    openai_server.script(*[ScriptedResponse(status=status, headers={"Retry-After": "0"})] * 3)
    with pytest.raises(LLMError) as err:
        make_llm(max_retries=0).generate_plan(plan_request)
    assert err.value.kind == kind
