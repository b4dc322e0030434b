"""The cost cap holds in every mode and for every engine, counted in whole micro-dollars."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.plugin.ledger import MAX_MICRO, CostLedger, to_micro

CASES = 15


def _project(root: Path, cost: float) -> None:
    con = sqlite3.connect(root / "shop.sqlite")
    con.executescript("CREATE TABLE t(n INTEGER); INSERT INTO t VALUES (1);")
    con.commit()
    con.close()
    (root / "nl2sql.yaml").write_text(
        "version: 1\ndatasources:\n  shop:\n    url: sqlite:///shop.sqlite\nroles:\n  admin: {datasources: \"*\"}\n"
    )
    cases = "".join(
        f"- id: c_{i:02d}\n  question: How many rows are there ({i})?\n  datasources: [shop]\n  status: approved\n"
        "  outcome: {admin: allowed}\n  sql: SELECT n FROM t\n  rows:\n  - {n: 1}\n"
        for i in range(CASES)
    )
    (root / "suite.yaml").write_text("version: 1\ncases:\n" + cases)
    (root / "p.jsonl").write_text(
        "".join(json.dumps({"id": f"c_{i:02d}", "sql": "SELECT n FROM t", "cost_usd": cost}) + "\n" for i in range(CASES))
    )


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, list[dict]]:
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "suite.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
        "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-p", "no:randomly", *args,
    )
    return result, json.loads((pytester.path / "r.json").read_text())["items"]


@pytest.mark.parametrize("mode", ["plans", "full", "retrieval"])
def test_a_predictions_file_is_held_to_the_cap_in_every_mode(pytester: pytest.Pytester, mode: str) -> None:
    _project(pytester.path, 0.01)
    result, items = _run(pytester, "--nl2sql-mode", mode, "--nl2sql-max-cost", "0.10", "-rs")
    answered = [i for i in items if i["verdict"] != "skipped"]
    skipped = [i for i in items if i["verdict"] == "skipped"]
    assert len(answered) == 10  # ten calls of $0.01 reach $0.10 exactly: no eleventh
    assert len(skipped) == CASES - 10
    assert all(i["skipped"] == "cost cap reached" for i in skipped)
    assert sum(i["cost_usd"] for i in answered) == pytest.approx(0.10)
    result.assert_outcomes(passed=10, skipped=CASES - 10)
    result.stdout.fnmatch_lines(["*cost cap reached*"])


def test_the_cap_is_the_sum_not_the_float_sum(pytester: pytest.Pytester) -> None:
    _project(pytester.path, 0.07)  # 0.07 * 3 == 0.21000000000000002 as floats
    result, items = _run(pytester, "--nl2sql-max-cost", "0.21")
    assert sum(i["verdict"] != "skipped" for i in items) == 3


def test_without_a_cap_every_item_runs(pytester: pytest.Pytester) -> None:
    _project(pytester.path, 0.01)
    result, items = _run(pytester)
    assert all(i["verdict"] == "passed" for i in items) and len(items) == CASES


def test_the_ledger_counts_whole_micro_dollars(tmp_path: Path) -> None:
    ledger = CostLedger(tmp_path / "l.txt", 0.10)
    (tmp_path / "l.txt").write_text("0\n0\n")
    calls = 0
    while ledger.may_spend():
        ledger.add(0.01)
        calls += 1
    assert calls == 10
    assert (tmp_path / "l.txt").read_text() == "100000\n10\n"
    assert ledger.spent_micro() == 100_000 and ledger.spent() == 0.1


def test_micro_dollar_conversion() -> None:
    assert to_micro(0.07) == 70_000  # from the shortest decimal form, not 70000.00000000001
    assert to_micro(1.5e-7) == 1  # a sub-micro-dollar cost still counts (rounded up) ...
    assert to_micro(1.5e-7, up=False) == 0  # ... and a cap is rounded down
    assert to_micro(float("nan")) == to_micro(-1.0) == to_micro(None) == to_micro("x") == 0  # type: ignore[arg-type]
    assert to_micro(float("inf")) == to_micro(1e300) == MAX_MICRO


def test_an_infinite_cost_spends_the_whole_budget(tmp_path: Path) -> None:
    ledger = CostLedger.create(1000.0)
    try:
        ledger.add(float("inf"))
        assert not ledger.may_spend()
        ledger.add(float("-inf"))  # a negative cost refunds nothing
        assert not ledger.may_spend()
    finally:
        ledger.remove()
