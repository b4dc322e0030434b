"""The client's hard limits, against a real HTTP server on 127.0.0.1 that misbehaves on purpose:
a whole-request deadline (even when bytes trickle) and a cap on the response body."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc

import pytest

from pytest_nl2sql.llm import LLMError
from pytest_nl2sql.llm.openai_client import MAX_RESPONSE_BYTES
from tests.llm.openai_server import ScriptedResponse

#: A hang-catcher, not a speed check: a trickled answer (one byte per 0.2 s) takes over a minute to
#: arrive whole, so a client without a whole-request deadline is caught even on a loaded machine; the
#: deadline itself is shown by the error's words (timeout_s) and by the lower bound on the time taken.
HANG = 30.0


def _fails_within(seconds: float, call) -> tuple[LLMError, float]:
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        call()
    took = time.monotonic() - started
    assert took < seconds, f"took {took:.1f} s"
    return info.value, took


def test_a_body_trickled_byte_by_byte_is_cut_at_timeout_s(openai_server, make_llm, plan_request):
    # each byte comes well within timeout_s, so only a deadline on the whole request stops it
    openai_server.script(ScriptedResponse(trickle_s=0.2))
    llm = make_llm(timeout_s=1.0, max_retries=0)
    error, took = _fails_within(HANG, lambda: llm.generate_plan(plan_request))
    assert took >= 0.9
    assert "did not answer within timeout_s=1 s" in str(error)
    assert error.retryable


def test_trickled_headers_are_cut_at_timeout_s_too(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(trickle_s=0.2, trickle_headers=True))
    llm = make_llm(timeout_s=1.0, max_retries=0)
    error, _ = _fails_within(HANG, lambda: llm.generate_plan(plan_request))
    assert "did not answer within timeout_s=1 s" in str(error)


def test_each_retry_gets_its_own_deadline_and_the_call_ends(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(trickle_s=0.2), ScriptedResponse(trickle_s=0.2))
    llm = make_llm(timeout_s=0.8, max_retries=1, backoff_s=0.0)
    error, _ = _fails_within(HANG, lambda: llm.generate_plan(plan_request))
    assert "gave up after 2 attempts" in str(error)
    assert len(openai_server.completion_requests) == 2


def test_the_next_call_on_the_same_client_has_a_fresh_deadline(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(trickle_s=0.2))
    llm = make_llm(timeout_s=1.0, max_retries=0)
    with pytest.raises(LLMError):
        llm.generate_plan(plan_request)
    assert llm.generate_plan(plan_request).plan["kind"] == "sql"  # the default answer, at once


def test_an_endless_body_stops_at_the_cap_without_eating_memory(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(endless=True))
    llm = make_llm(timeout_s=30.0, max_retries=2)
    tracemalloc.start()
    try:
        error, _ = _fails_within(20.0, lambda: llm.generate_plan(plan_request))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "over the 8 MiB limit" in str(error)
    assert not error.retryable  # the same server would do it again
    assert len(openai_server.completion_requests) == 1
    assert peak < 4 * MAX_RESPONSE_BYTES


def test_a_declared_length_over_the_cap_is_refused_before_reading(openai_server, make_llm, plan_request):
    llm = make_llm(max_response_bytes=200)  # a whole completion is longer than this
    with pytest.raises(LLMError, match="over the 200 bytes limit"):
        llm.generate_plan(plan_request)


def test_a_gzip_bomb_is_capped_after_decompression(openai_server, make_llm, plan_request):
    bomb = gzip.compress(b"[" * (64 * 1024 * 1024))  # 64 MiB that compress to about 64 KiB
    assert len(bomb) < MAX_RESPONSE_BYTES
    openai_server.script(ScriptedResponse(body=bomb, headers={"Content-Encoding": "gzip"}))
    with pytest.raises(LLMError, match="over the 8 MiB limit"):
        make_llm().generate_plan(plan_request)


def test_a_gzipped_answer_is_still_read(openai_server, make_llm, plan_request):
    completion = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"kind": "sql", "sql": "SELECT 2"}'}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    openai_server.script(ScriptedResponse(body=gzip.compress(json.dumps(completion).encode()), headers={"Content-Encoding": "gzip"}))
    assert make_llm().generate_plan(plan_request).plan == {"kind": "sql", "sql": "SELECT 2"}
    assert openai_server.completion_requests[0].headers.get("accept-encoding") == "identity"


def test_an_encoding_the_client_cannot_bound_is_an_llm_error(openai_server, make_llm, plan_request):
    openai_server.script(ScriptedResponse(body=b"\x00" * 50, headers={"Content-Encoding": "br"}))
    with pytest.raises(LLMError, match="compressed its answer as br"):
        make_llm().generate_plan(plan_request)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,  # nested past any recursion limit
        json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "[" * 100_000}}]}).encode(),
        b"\xff\xfe not json",
        b'{"choices": [], "usage": {"prompt_tokens": ' + b"9" * 5000 + b"}}",
        json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": '{"n": ' + "9" * 5000 + "}"}}]}).encode(),
    ],
    ids=["nested-body", "nested-content", "not-json", "huge-usage", "huge-number-in-plan"],
)
def test_hostile_bodies_are_llm_errors(openai_server, make_llm, plan_request, body):
    openai_server.script(ScriptedResponse(body=body))
    with pytest.raises(LLMError):
        make_llm(max_retries=0).generate_plan(plan_request)


@pytest.mark.parametrize("usage", [(-5, 3), (10**400, 1)], ids=["negative", "huge"])
def test_impossible_token_counts_are_llm_errors(openai_server, make_llm, plan_request, usage):
    openai_server.script(ScriptedResponse(usage=usage))
    with pytest.raises(LLMError):
        make_llm(max_retries=0).generate_plan(plan_request)


def test_max_response_bytes_is_checked():
    from pytest_nl2sql.llm import OpenAICompatibleLLM

    with pytest.raises(ValueError, match="max_response_bytes"):
        OpenAICompatibleLLM("http://127.0.0.1:1/v1", "m", None, price_input_per_1k=0, price_output_per_1k=0, max_response_bytes=0)
