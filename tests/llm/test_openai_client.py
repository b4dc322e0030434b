"""OpenAICompatibleLLM against a real local OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from pytest_nl2sql.llm import LLMError, OpenAICompatibleLLM
from tests.llm.conftest import API_KEY, PLAN_SCHEMA
from tests.llm.openai_server import OpenAITestServer, ScriptedResponse

GOOD_PLAN = {"kind": "sql", "sql": "SELECT g.Name, COUNT(*) FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.Name"}


def test_success_parses_the_plan_and_prices_the_usage(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(plan=GOOD_PLAN, usage=(1200, 300)))
    llm = make_llm(price_input_per_1k=0.5, price_output_per_1k=1.5)

    result = llm.generate_plan(plan_request)

    assert result.plan == GOOD_PLAN
    assert json.loads(result.raw) == GOOD_PLAN
    assert (result.input_tokens, result.output_tokens) == (1200, 300)
    assert result.cost_usd == pytest.approx(1.2 * 0.5 + 0.3 * 1.5)
    assert result.model == "plan-model"
    assert result.latency_s >= 0


def test_the_request_carries_model_schema_prompt_and_key(openai_server, make_llm, plan_request):
    make_llm().generate_plan(plan_request)

    [sent] = openai_server.completion_requests
    assert sent.json["model"] == "plan-model"
    assert sent.json["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "plan", "schema": PLAN_SCHEMA, "strict": False},
    }
    prompt = "\n".join(m["content"] for m in sent.messages)
    assert [m["role"] for m in sent.messages] == ["system", "user"]
    assert plan_request.schema_text in prompt
    assert plan_request.question in prompt
    assert sent.authorization == f"Bearer {API_KEY}"


def test_model_reported_by_the_server_is_kept(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(model="plan-model-2024-08-06"))
    assert make_llm().generate_plan(plan_request).model == "plan-model-2024-08-06"


def test_missing_usage_counts_as_zero(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(usage=None))
    result = make_llm().generate_plan(plan_request)
    assert (result.input_tokens, result.output_tokens, result.cost_usd) == (0, 0, 0.0)


def test_rate_limit_is_retried_then_succeeds(openai_server, make_llm, plan_request):
    openai_server.script(
        ScriptedResponse(status=429, headers={"Retry-After": "0"}),
        ScriptedResponse(plan=GOOD_PLAN),
    )
    result = make_llm(backoff_s=5.0).generate_plan(plan_request)
    assert result.plan == GOOD_PLAN
    assert len(openai_server.completion_requests) == 2


def test_a_huge_retry_after_is_capped(openai_server, make_llm, plan_request):
    # The server asks for an hour; max_wait_s=0 caps the wait, so the retry happens now.
    openai_server.script(
        ScriptedResponse(status=429, headers={"Retry-After": "3600"}),
        ScriptedResponse(plan=GOOD_PLAN),
    )
    assert make_llm(max_wait_s=0).generate_plan(plan_request).plan == GOOD_PLAN


def test_server_errors_exhaust_the_retries(openai_server, make_llm, plan_request):
    openai_server.script(*[ScriptedResponse(status=503)] * 3, ScriptedResponse(plan=GOOD_PLAN))

    with pytest.raises(LLMError) as info:
        make_llm(max_retries=2).generate_plan(plan_request)

    assert info.value.status == 503
    assert info.value.retryable
    assert "503" in str(info.value)
    assert "3 attempts" in str(info.value)
    assert len(openai_server.completion_requests) == 3
    assert openai_server.pending == 1  # the success was never reached


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_fail_at_once(openai_server, make_llm, plan_request, status):
    openai_server.script(ScriptedResponse(status=status), ScriptedResponse(plan=GOOD_PLAN))

    with pytest.raises(LLMError) as info:
        make_llm().generate_plan(plan_request)

    assert info.value.status == status
    assert not info.value.retryable
    assert f"HTTP {status}" in str(info.value)
    assert len(openai_server.completion_requests) == 1


def test_unauthorized_names_the_key_variable(openai_server, plan_request, monkeypatch):
    monkeypatch.setenv("NL2SQL_TEST_KEY", API_KEY)
    config = SimpleNamespace(
        base_url=openai_server.base_url, model="m", api_key_env="NL2SQL_TEST_KEY",
        price_input_per_1k=0.0, price_output_per_1k=0.0, timeout_s=5, max_retries=0,
    )
    openai_server.script(ScriptedResponse(status=401))
    with OpenAICompatibleLLM.from_config(config) as llm, pytest.raises(LLMError) as info:
        llm.generate_plan(plan_request)
    assert "$NL2SQL_TEST_KEY" in str(info.value)


def test_invalid_json_is_quoted_and_still_costs(openai_server, make_llm, plan_request):
    answer = "Sure! Here is the plan you asked for: SELECT * FROM Track " + "x" * 400
    openai_server.script(ScriptedResponse(content=answer, usage=(1000, 1000)))

    with pytest.raises(LLMError) as info:
        make_llm(price_input_per_1k=1.0, price_output_per_1k=2.0).generate_plan(plan_request)

    message = str(info.value)
    assert "not JSON" in message
    assert answer[:200] in message
    assert answer[:201] not in message
    assert (info.value.input_tokens, info.value.output_tokens) == (1000, 1000)
    assert info.value.cost_usd == pytest.approx(3.0)
    assert len(openai_server.completion_requests) == 1


def test_truncated_json_says_it_was_cut_off(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(content='{"kind": "sql", "sql": "SEL', finish_reason="length"))
    with pytest.raises(LLMError, match="cut off at the token limit"):
        make_llm().generate_plan(plan_request)


def test_json_that_is_not_an_object_is_rejected(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(content='["SELECT 1"]'))
    with pytest.raises(LLMError, match="JSON list, but a plan must be a JSON object"):
        make_llm().generate_plan(plan_request)


def test_a_code_fenced_plan_is_accepted(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(content="```json\n" + json.dumps(GOOD_PLAN) + "\n```"))
    assert make_llm().generate_plan(plan_request).plan == GOOD_PLAN


def test_a_body_that_is_not_a_completion_is_explained(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(body="<html>proxy login</html>"))
    with pytest.raises(LLMError, match="not a chat completion.*ends in /v1"):
        make_llm().generate_plan(plan_request)


def test_a_slow_server_is_retried_then_reported(openai_server, make_llm, plan_request):
    openai_server.script(*[ScriptedResponse(delay_s=30)] * 2)

    with pytest.raises(LLMError) as info:
        make_llm(timeout_s=0.2, max_retries=1).generate_plan(plan_request)

    assert info.value.retryable
    assert info.value.status is None
    assert "timeout_s=0.2" in str(info.value)
    assert "2 attempts" in str(info.value)
    # each attempt connected; under load a 0.2 s attempt may give up before its request is
    # written, and the server accepts late: count the connections, once both arrived
    assert openai_server.wait_for_connections(2) == 2
    assert 1 <= len(openai_server.completion_requests) <= 2


def test_a_server_that_is_down_is_reported(make_llm, plan_request):
    with OpenAITestServer() as gone:
        base_url = gone.base_url
    with pytest.raises(LLMError, match="could not connect") as info:
        make_llm(base_url=base_url, max_retries=1).generate_plan(plan_request)
    assert info.value.retryable


def test_the_key_never_shows(openai_server, make_llm, plan_request):
    echo = f"Incorrect API key provided: {API_KEY}"
    openai_server.script(
        ScriptedResponse(status=401, body={"error": {"message": echo, "type": "invalid_request_error"}}),
        ScriptedResponse(status=500, body={"error": {"message": echo}}),
        ScriptedResponse(content=f"not json {API_KEY}"),
    )
    llm = make_llm(max_retries=0)
    messages = [repr(llm), str(llm)]
    for _ in range(3):
        with pytest.raises(LLMError) as info:
            llm.generate_plan(plan_request)
        messages += [str(info.value), repr(info.value)]
    assert "Incorrect API key provided: ***" in messages[2]
    assert not [m for m in messages if API_KEY in m]


def test_from_config_reads_the_key_from_the_environment(openai_server, plan_request, monkeypatch):
    monkeypatch.setenv("NL2SQL_TEST_KEY", "sk-from-env")
    config = SimpleNamespace(
        base_url=openai_server.base_url, model="cfg-model", api_key_env="NL2SQL_TEST_KEY",
        price_input_per_1k=2.0, price_output_per_1k=4.0, timeout_s=5, max_retries=1,
    )
    openai_server.script(ScriptedResponse(usage=(500, 250)))
    with OpenAICompatibleLLM.from_config(config) as llm:
        result = llm.generate_plan(plan_request)
    assert result.cost_usd == pytest.approx(2.0)
    [sent] = openai_server.completion_requests
    assert sent.authorization == "Bearer sk-from-env"
    assert sent.json["model"] == "cfg-model"


def test_from_config_names_a_missing_variable(openai_server, monkeypatch):
    monkeypatch.delenv("NL2SQL_ABSENT_KEY", raising=False)
    config = SimpleNamespace(
        base_url=openai_server.base_url, model="m", api_key_env="NL2SQL_ABSENT_KEY",
        price_input_per_1k=0.0, price_output_per_1k=0.0, timeout_s=5, max_retries=0,
    )
    with pytest.raises(LLMError, match="environment variable NL2SQL_ABSENT_KEY is not set"):
        OpenAICompatibleLLM.from_config(config)


def test_from_config_without_a_key_serves_local_servers(openai_server, plan_request):
    config = SimpleNamespace(
        base_url=openai_server.base_url, model="llama3", api_key_env=None,
        price_input_per_1k=0.0, price_output_per_1k=0.0, timeout_s=5, max_retries=0,
    )
    with OpenAICompatibleLLM.from_config(config) as llm:
        assert llm.generate_plan(plan_request).cost_usd == 0.0


def test_from_config_names_a_missing_setting():
    with pytest.raises(LLMError, match="no 'model'; set llm.model"):
        OpenAICompatibleLLM.from_config(SimpleNamespace(base_url="http://127.0.0.1:1/v1"))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"base_url": "127.0.0.1:8000"}, "base_url must be an http"),
        ({"model": ""}, "model must name the model"),
        ({"price_input_per_1k": -1}, "price_input_per_1k must be 0 or more"),
        ({"timeout_s": 0}, "timeout_s must be greater than 0"),
        ({"max_retries": -1}, "max_retries must be an integer, 0 or more"),
    ],
)
def test_bad_arguments_are_named(make_llm, overrides, message):
    with pytest.raises(ValueError, match=message):
        make_llm(**overrides)


def test_missing_openai_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    with pytest.raises(LLMError, match=r"pip install 'pytest-nl2sql\[openai\]'"):
        OpenAICompatibleLLM(
            "http://127.0.0.1:1/v1", "m", "k", price_input_per_1k=0, price_output_per_1k=0
        )
