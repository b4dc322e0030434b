"""Fail fast: a server that is down, or rejects the key, is asked M times, not once per item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.plugin.failfast import FAIL_FAST_AFTER
from tests.full.conftest import FULL, KEY, use_server
from tests.llm.openai_server import OpenAITestServer, ScriptedResponse


def _dead_url() -> str:
    server = OpenAITestServer().start()
    url = server.base_url
    server.stop()  # nothing listens on that port any more
    return url


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_server_that_is_down_is_asked_m_times_then_the_run_stops_asking(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch, concurrency: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    use_server(project, _dead_url())
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", concurrency, "--nl2sql-out", "r.json")
    assert result.ret == 1
    data = json.loads((project / "r.json").read_text())
    errors = [i["error"] or "" for i in data["items"]]
    asked = [e for e in errors if e.startswith("LLM: could not connect")]
    not_asked = [e for e in errors if e.startswith("not asked: ")]
    # the items that need no LLM call never fail; every other one is one of the two
    assert len(asked) == FAIL_FAST_AFTER
    assert len(not_asked) == len(data["items"]) - FAIL_FAST_AFTER
    assert data["summary"]["not_asked"] == len(not_asked)
    assert "LLM calls in a row could not reach the LLM server" in not_asked[0]
    result.stdout.fnmatch_lines([f" fail fast: {len(not_asked)} items not asked: *could not reach the LLM server*"])


def test_a_rejected_key_stops_the_run_after_m_calls(pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAITestServer() as server:
        server.script(*[ScriptedResponse(status=401)] * 20)
        use_server(project, server.base_url)
        result = pytester.runpytest_subprocess(*FULL, "--nl2sql-out", "r.json", "-n", "2")
        calls = len(server.completion_requests)
    assert result.ret == 1
    data = json.loads((project / "r.json").read_text())
    assert calls <= 2 * FAIL_FAST_AFTER  # each worker asks M times at most
    assert sum(1 for i in data["items"] if (i["error"] or "").startswith("not asked: ")) == 8 - calls
    assert "rejected the API key" in json.dumps(data)


def test_a_success_resets_the_count() -> None:
    from pytest_nl2sql.llm import LLMError
    from pytest_nl2sql.plugin.failfast import FailFast

    ff = FailFast(after=2)
    ff.failed(LLMError("down", kind="connection"))
    ff.succeeded()
    ff.failed(LLMError("down", kind="connection"))
    ff.failed(LLMError("bad plan", kind="response"))  # neither counts nor resets
    assert ff.stopped() is None
    ff.failed(LLMError("down", kind="connection"))
    assert ff.stopped() is not None and "2 LLM calls in a row" in ff.stopped()
