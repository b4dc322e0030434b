"""--nl2sql-repeat K: pass^k gates, pass@k and flaky items are reported apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.full.conftest import FULL, stripped


def test_a_server_that_answers_differently_on_alternate_calls_makes_items_flaky(
    pytester: pytest.Pytester, project: Path, serve
) -> None:
    server, plans = serve(flaky=True)  # mini_002 is answered wrong on every other call
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-repeat", "2", "--nl2sql-concurrency", "1", "--nl2sql-out", "r.json")
    assert plans.calls == 16
    result.assert_outcomes(passed=6, failed=2)
    data = json.loads((project / "r.json").read_text())
    s = data["summary"]
    flaky = ["evals/mini.yaml::mini_002[admin]", "evals/mini.yaml::mini_002[viewer]"]
    assert s["flaky"] == flaky and s["repeat"] == 2
    assert (s["pass_at_k"]["passed"], s["pass_at_k"]["total"]) == (8, 8)
    assert (s["pass_hat_k"]["passed"], s["pass_hat_k"]["total"]) == (6, 8)
    assert s["pass_hat_k"]["ci95"][0] < 0.75 < s["pass_hat_k"]["ci95"][1]
    by_id = {i["nodeid"]: i for i in data["items"]}
    record = by_id[flaky[0]]
    assert record["flaky"] is True and [a["passed"] for a in record["attempts"]] == [True, False]
    assert record["verdict"] == "failed" and record["failed_scores"] == ["result_match"]
    assert record["cost_usd"] == pytest.approx(0.02)
    assert by_id["evals/mini.yaml::mini_001[admin]"]["flaky"] is False
    result.stdout.fnmatch_lines([
        "*attempt 2 of 2 failed; 1 of 2 passed (flaky)*",
        "  pass@2 (any attempt)*100.0%*(8/8*",
        "  pass^2 (every attempt)*75.0%*(6/8*",
        " flaky (some attempts passed, some failed): evals/mini.yaml::mini_002[admin] (1/2), evals/mini.yaml::mini_002[viewer] (1/2)",
    ])


def test_repeats_run_concurrently_and_under_xdist_with_the_serial_report(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve(hold_s=0.05)
    pytester.runpytest_subprocess(*FULL, "--nl2sql-repeat", "3", "--nl2sql-concurrency", "1", "--nl2sql-out", "a.json")
    pytester.runpytest_subprocess(*FULL, "--nl2sql-repeat", "3", "--nl2sql-concurrency", "4", "-n", "2", "--nl2sql-out", "b.json")
    assert plans.calls == 48
    a, b = stripped(project / "a.json"), stripped(project / "b.json")
    assert a == b and a["summary"]["pass_hat_k"]["passed"] == 8 and a["summary"]["flaky"] == []


def test_repeat_must_be_a_whole_number_of_at_least_one(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-repeat", "0")
    result.stderr.fnmatch_lines(["ERROR: --nl2sql-repeat must be at least 1 (got 0)"])
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-concurrency", "many")
    result.stderr.fnmatch_lines(["ERROR: --nl2sql-concurrency: 'many' is not a whole number"])
