"""Accounting: tokens, cost and latency per item and in the summary, the progress line,
--nl2sql-estimate, and --nl2sql-save-predictions (record, then replay at no cost)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.full.conftest import FULL


def test_tokens_cost_and_latency_per_item_and_in_the_summary(pytester: pytest.Pytester, project: Path, serve) -> None:
    serve(prompt_tokens=1000, completion_tokens=10)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-out", "r.json")
    data = json.loads((project / "r.json").read_text())
    s = data["summary"]
    assert (s["llm_calls"], s["tokens_in"], s["tokens_out"]) == (8, 8000, 80)
    assert s["cost_usd"] == pytest.approx(0.08) and s["cost_per_passed_usd"] == pytest.approx(0.01)
    assert 0 < s["latency_p50_s"] <= s["latency_p95_s"]
    item = data["items"][0]
    assert (item["llm"]["calls"], item["llm"]["input_tokens"], item["llm"]["output_tokens"]) == (1, 1000, 10)
    assert item["llm"]["llm_latency_s"] > 0
    result.stdout.fnmatch_lines(["  LLM: 8 calls, 8000 tokens in, 80 out, $0.010000 per passed item", "  latency: p50 * s, p95 * s"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_progress_line_with_running_cost_and_eta_but_not_with_q(
    pytester: pytest.Pytester, project: Path, serve, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    serve()
    monkeypatch.setenv("NL2SQL_PROGRESS_S", "0")  # a long run, as far as the line is concerned
    result = pytester.runpytest_subprocess(*FULL, *workers)
    result.stdout.fnmatch_lines(["nl2sql: 8/8 items, $0.0800 so far, * s elapsed, ETA 0:00"])
    quiet = pytester.runpytest_subprocess(*FULL, *workers, "-q")
    assert "items, $" not in quiet.stdout.str()


def test_estimate_prints_calls_tokens_and_cost_and_asks_nothing(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve(completion_tokens=40)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-estimate", "--nl2sql-cache")
    assert result.ret == 0 and plans.calls == 0
    result.stdout.fnmatch_lines([
        "8 items x 1 attempt = 8 LLM calls: 0 answered from the cache, 8 to ask (model gpt-4o-mini at *)",
        "  ~* input tokens, ~1,200 output tokens (150 a call, a guess: no cached answer to go by)",
        "  ~$* at $0.01 / $0 per 1k tokens in / out",
    ])
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache")
    assert plans.calls == 8
    again = pytester.runpytest_subprocess(*FULL, "--nl2sql-estimate", "--nl2sql-cache", "--nl2sql-repeat", "2")
    assert plans.calls == 8
    again.stdout.fnmatch_lines([
        "8 items x 2 attempts = 16 LLM calls: 8 answered from the cache, 8 to ask *",
        "  ~* input tokens, ~320 output tokens (40 a call, the mean of the cached answers)",
    ])
    refused = pytester.runpytest_subprocess(*FULL, "--nl2sql-estimate", "-n", "2")
    refused.stderr.fnmatch_lines(["ERROR: --nl2sql-estimate runs in one process*"])


def test_saved_predictions_replay_the_run_at_no_cost(pytester: pytest.Pytester, project: Path, serve) -> None:
    serve()
    run = pytester.runpytest_subprocess(*FULL, "--nl2sql-save-predictions", "out/preds.jsonl", "--nl2sql-out", "full.json")
    run.stdout.fnmatch_lines([" predictions: 8 written to out/preds.jsonl"])
    lines = [json.loads(line) for line in (project / "out" / "preds.jsonl").read_text().splitlines()]
    # every answer is saved: with SQL, or without it and saying what it was
    by_item = {(p["id"], p["role"]): p for p in lines}
    assert len(by_item) == 8
    assert by_item[("mini_001", "viewer")]["sql"] is None and by_item[("mini_001", "viewer")]["status"] == "refused"
    assert by_item[("mini_003", "admin")]["status"] == "not_answerable"
    assert by_item[("mini_004", "admin")]["status"] == "needs_clarification"
    replay = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-clarify", "--nl2sql-predictions", "out/preds.jsonl",
        "--nl2sql-out", "replay.json", "-p", "no:cacheprovider",
    )
    full = {i["nodeid"]: i for i in json.loads((project / "full.json").read_text())["items"]}
    again = {i["nodeid"]: i for i in json.loads((project / "replay.json").read_text())["items"]}
    assert {n: r["verdict"] for n, r in again.items()} == {n: r["verdict"] for n, r in full.items()}
    assert replay.ret == run.ret
