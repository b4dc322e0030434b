"""Mode full against a local OpenAI-compatible server; the cost cap holds under xdist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.openai_server import OpenAITestServer


def _use_server(project: Path, base_url: str) -> None:
    cfg = project / "nl2sql.yaml"
    text = cfg.read_text()
    text = text.replace("base_url: https://api.openai.com/v1", f"base_url: {base_url}")
    text = text.replace("price_input_per_1k: 0.00015", "price_input_per_1k: 0.01")
    text = text.replace("price_output_per_1k: 0.0006", "price_output_per_1k: 0.0")
    cfg.write_text(text)


def _plan_for(request: dict) -> dict:
    question = request["messages"][-1]["content"]
    if "customers" in question:
        return {"datasource": "chinook", "from": "Customer", "select": ["Country", {"expr": {"count": "CustomerId"}, "alias": "n"}], "group_by": ["Country"]}
    return {"kind": "not_answerable", "reason": "test server"}


def test_mode_full_answers_through_the_llm_and_prices_tokens(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    with OpenAITestServer(_plan_for, prompt_tokens=1000, completion_tokens=10) as server:
        _use_server(project, server.base_url)
        result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "full", "-k", "mini_001", "--nl2sql-out", "r.json", "-p", "no:cacheprovider")
        assert len(server.completion_requests) == 3
        assert server.completion_requests[0].authorization == "Bearer sk-test-key"
    result.assert_outcomes(passed=3)
    data = json.loads((project / "r.json").read_text())
    assert data["summary"]["cost_usd"] == pytest.approx(0.03)
    assert "sk-test-key" not in result.stdout.str()


def test_the_cost_cap_holds_for_the_whole_run_under_xdist(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    with OpenAITestServer(_plan_for, prompt_tokens=1000, completion_tokens=0) as server:
        _use_server(project, server.base_url)
        result = pytester.runpytest_subprocess(
            "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "full", "--nl2sql-max-cost", "0.025",
            "-n", "2", "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-rs",
        )
        calls = len(server.completion_requests)
    data = json.loads((project / "r.json").read_text())
    spent = data["summary"]["cost_usd"]
    # the budget is checked before each call: 3 calls reach it, each worker may have one in flight
    assert 3 <= calls <= 3 + 2
    assert spent == pytest.approx(0.01 * calls)
    skipped = [i for i in data["items"] if i["verdict"] == "skipped"]
    assert len(skipped) == 7 - calls
    result.stdout.fnmatch_lines(["*cost cap reached*"])
