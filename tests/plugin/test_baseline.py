"""The baseline gate: known failures xfail, new ones fail, fixed ones are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows


def _break(project: Path, case_id: str) -> None:
    update_rows(project / "evals" / "mini.yaml", {case_id: RowsUpdate([{"x": 1}])})


def _write_baseline(path: Path, keys: list[str]) -> None:
    path.write_text(json.dumps({"version": 1, "failures": {k: {"scorer": "result_match", "reason": "known"} for k in keys}}))


def test_known_failures_xfail_and_new_ones_fail(pytester: pytest.Pytester, project: Path) -> None:
    _break(project, "mini_002")
    _write_baseline(project / "evals" / "mini.baseline.json", ["mini.yaml::mini_002[admin]"])
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    result.assert_outcomes(passed=5, failed=1, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_run_with_only_known_failures_passes(pytester: pytest.Pytester, project: Path) -> None:
    _break(project, "mini_002")
    _write_baseline(project / "evals" / "mini.baseline.json", ["mini.yaml::mini_002[admin]", "mini.yaml::mini_002[viewer]"])
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    result.assert_outcomes(passed=5, xfailed=2)
    assert result.ret == 0


def test_a_fixed_known_failure_is_reported_and_fails_when_strict(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "known.json"
    _write_baseline(baseline, ["mini.yaml::mini_001[admin]"])
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-baseline", str(baseline))
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*fixed: evals/mini.yaml::mini_001?admin?*"])
    strict = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-baseline", str(baseline), "--nl2sql-strict-baseline")
    strict.assert_outcomes(passed=6, failed=1)
    strict.stdout.fnmatch_lines(["*a known failure now passes (strict baseline)*"])


def test_update_baseline_keeps_entries_of_items_that_did_not_run(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "evals" / "mini.baseline.json"
    _write_baseline(baseline, ["mini.yaml::mini_003[admin]", "mini.yaml::gone[admin]"])
    _break(project, "mini_002")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 or mini_003", "--nl2sql-update-baseline")
    assert result.ret in (0, 1)
    failures = json.loads(baseline.read_text())["failures"]
    assert set(failures) == {"mini.yaml::mini_002[admin]", "mini.yaml::mini_002[viewer]", "mini.yaml::gone[admin]"}
    assert failures["mini.yaml::mini_002[admin]"]["scorer"] == "result_match"
    assert "columns" in failures["mini.yaml::mini_002[admin]"]["reason"]
    # the gate now holds: the same run passes
    again = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    again.assert_outcomes(passed=5, xfailed=2)


def test_update_baseline_is_written_by_the_controller_under_xdist(pytester: pytest.Pytester, project: Path) -> None:
    _break(project, "mini_001")
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "--nl2sql-update-baseline", "-p", "no:cacheprovider")
    assert result.ret == 1
    failures = json.loads((project / "evals" / "mini.baseline.json").read_text())["failures"]
    assert set(failures) == {"mini.yaml::mini_001[admin]", "mini.yaml::mini_001[analyst]"}
