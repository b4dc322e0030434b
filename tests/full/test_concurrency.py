"""--nl2sql-concurrency: engine calls in flight at once, the report of a serial run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.full.conftest import FULL, stripped


def _order(result: pytest.RunResult) -> list[str]:
    return [line.split(" ")[0] for line in result.outlines if line.startswith("evals/mini.yaml::")]


def test_concurrent_calls_give_the_serial_report_in_pytest_order(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve(hold_s=0.3)
    serial = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "1", "--nl2sql-out", "serial.json", "-v")
    assert plans.most == 1 and plans.calls == 8
    plans.most = 0
    concurrent = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "4", "--nl2sql-out", "concurrent.json", "-v")
    assert serial.ret == concurrent.ret == 0
    assert plans.most >= 2, "the calls were not concurrent"
    assert plans.calls == 16
    assert _order(serial) == _order(concurrent) and len(_order(serial)) == 8
    assert stripped(project / "serial.json") == stripped(project / "concurrent.json")


def test_mode_full_is_concurrent_by_default_and_other_modes_are_not(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve(hold_s=0.3)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-out", "r.json")
    assert result.ret == 0 and plans.most >= 2
    import json

    assert json.loads((project / "r.json").read_text())["run"]["concurrency"] == 8


def test_an_engine_that_is_not_concurrency_safe_is_called_one_at_a_time(pytester: pytest.Pytester, project: Path, serve) -> None:
    pytester.makeconftest(
        """
        from pytest_nl2sql.engine.reference import ReferenceEngine

        class OneAtATime(ReferenceEngine):
            concurrency_safe = False

        def pytest_nl2sql_make_engine(config, project):
            return OneAtATime(project)
        """
    )
    server, plans = serve(hold_s=0.1)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "8")
    assert result.ret == 0
    assert plans.calls == 8 and plans.most == 1


def test_xdist_workers_each_run_their_calls_concurrently(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve(hold_s=0.3)
    serial = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "1", "--nl2sql-out", "serial.json")
    plans.most = 0
    parallel = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "4", "-n", "2", "--nl2sql-out", "parallel.json")
    assert serial.ret == parallel.ret == 0
    assert plans.calls == 16
    assert stripped(project / "serial.json") == stripped(project / "parallel.json")


def test_the_cost_cap_reserves_before_each_call(pytester: pytest.Pytester, project: Path, serve) -> None:
    # each call costs $0.01 (1000 tokens in at $0.01/1k); the cap lets 3 through, and the calls
    # in flight may overspend by at most one call per slot (concurrency 2, one process)
    server, plans = serve(hold_s=0.2)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "2", "--nl2sql-max-cost", "0.025", "--nl2sql-out", "r.json", "-rs")
    import json

    data = json.loads((project / "r.json").read_text())
    assert 3 <= plans.calls <= 3 + 2
    assert data["summary"]["cost_usd"] == pytest.approx(0.01 * plans.calls)
    assert data["summary"]["skipped"] == 8 - plans.calls
    result.stdout.fnmatch_lines(["*cost cap reached*"])


def test_the_ledger_reserves_the_mean_call_and_settles_the_real_cost(tmp_path: Path) -> None:
    from pytest_nl2sql.plugin.ledger import CostLedger

    ledger = CostLedger(tmp_path / "l.txt", 0.03)
    (tmp_path / "l.txt").write_text("0\n0\n")
    first = ledger.reserve()
    assert first == 0  # nothing settled yet: nothing to go by
    ledger.settle(first, 0.01)
    second, third = ledger.reserve(), ledger.reserve()
    assert second == third == 10_000  # the mean settled call, in micro-dollars
    assert ledger.reserve() is None  # spent 0.01 + reserved 0.02 reaches the cap: no fourth call
    ledger.settle(second, 0.01)
    assert ledger.reserve() is None
    ledger.settle(third, 0.0)  # it cost less than reserved: the budget opens again
    assert ledger.reserve() == 20_000 // 3
    assert ledger.spent_micro() == 20_000 and ledger.calls() == 3
