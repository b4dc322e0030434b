"""The baseline gate: known failures xfail, new ones fail, fixed ones are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows


def _break(project: Path, case_id: str) -> None:
    update_rows(project / "evals" / "mini.yaml", {case_id: RowsUpdate([{"x": 1}])})


def _entry(key: str, mode: str = "plans", scorer: str = "result_match") -> dict[str, str]:
    suite, _, rest = key.partition("::")
    case, _, role = rest.rstrip("]").partition("[")
    return {"suite": suite, "case": case, "role": role, "mode": mode, "scorer": scorer, "reason": "known"}


def _write_baseline(path: Path, keys: list[str], mode: str = "plans", scorer: str = "result_match") -> None:
    path.write_text(json.dumps({"version": 2, "failures": [_entry(k, mode, scorer) for k in keys]}))


def _keys(path: Path) -> set[str]:
    return {f"{e['suite']}::{e['case']}[{e['role']}]" for e in json.loads(path.read_text())["failures"]}


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


def test_update_baseline_keeps_entries_of_items_that_did_not_run_and_prunes_stale_ones(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "evals" / "mini.baseline.json"
    _write_baseline(baseline, ["mini.yaml::mini_003[admin]", "mini.yaml::mini_001[viewer]", "mini.yaml::gone[admin]"])
    _break(project, "mini_002")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 or mini_003", "--nl2sql-update-baseline")
    assert result.ret in (0, 1)
    data = json.loads(baseline.read_text())
    assert data["version"] == 2
    # mini_001[viewer] did not run (deselected): kept; gone[admin] names no case: pruned (stale)
    assert _keys(baseline) == {"mini.yaml::mini_002[admin]", "mini.yaml::mini_002[viewer]", "mini.yaml::mini_001[viewer]"}
    entry = next(e for e in data["failures"] if (e["case"], e["role"]) == ("mini_002", "admin"))
    assert (entry["scorer"], entry["mode"]) == ("result_match", "plans")
    assert "columns" in entry["reason"]
    # it says what changed, as syrupy reports unused snapshots
    result.stdout.fnmatch_lines([
        "*mini.baseline.json: 2 added, 1 removed (fixed), 1 removed (stale), 1 kept",
        "*+ mini.yaml::mini_002?admin? plans result_match: *",
        "*- mini.yaml::mini_003?admin? plans result_match (fixed)",
        "*- mini.yaml::gone?admin? plans result_match (stale: no approved case 'gone' in mini.yaml)",
    ])
    # the gate now holds: the same run passes
    again = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    again.assert_outcomes(passed=5, xfailed=2)


def test_update_baseline_is_written_by_the_controller_under_xdist(pytester: pytest.Pytester, project: Path) -> None:
    _break(project, "mini_001")
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "--nl2sql-update-baseline", "-p", "no:cacheprovider")
    assert result.ret == 1
    assert _keys(project / "evals" / "mini.baseline.json") == {"mini.yaml::mini_001[admin]", "mini.yaml::mini_001[analyst]"}


def test_a_known_failure_excuses_only_the_same_scorer_in_the_same_mode(pytester: pytest.Pytester, project: Path) -> None:
    """The issue's bug: a routing miss recorded in mode retrieval excused a result_match
    regression in mode plans. Now it fails, naming what the baseline knew."""
    _break(project, "mini_002")
    baseline = project / "evals" / "mini.baseline.json"
    _write_baseline(baseline, ["mini.yaml::mini_002[admin]"], mode="retrieval", scorer="routing")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 and admin", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*baseline: not a known failure; the baseline knew only: mode retrieval, routing: known"])
    # the same mode, another scorer: still a new failure
    _write_baseline(baseline, ["mini.yaml::mini_002[admin]"], mode="plans", scorer="routing")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 and admin")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the baseline knew only: mode plans, routing: known"])
    # the same scorer in the same mode: known
    _write_baseline(baseline, ["mini.yaml::mini_002[admin]"], mode="plans", scorer="result_match")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 and admin", "-rx")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *mini_002?admin? - known failure (baseline): result_match: known"])


def test_entries_of_another_mode_are_neither_fixed_nor_stale(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "evals" / "mini.baseline.json"
    _write_baseline(baseline, ["mini.yaml::mini_001[admin]"], mode="retrieval", scorer="routing")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-strict-baseline")
    assert result.ret == 0
    result.assert_outcomes(passed=7)


def test_strict_baseline_fails_on_stale_entries(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "evals" / "mini.baseline.json"
    _write_baseline(baseline, ["mini.yaml::gone[admin]", "mini.yaml::mini_001[nobody]"])
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    assert result.ret == 0  # reported, not failed
    result.stdout.fnmatch_lines([
        "*2 stale baseline entries (cases or roles the suites no longer have)",
        "*stale: mini.yaml::gone?admin? plans result_match: no approved case 'gone' in mini.yaml*",
        "*stale: mini.yaml::mini_001?nobody? plans result_match: case 'mini_001' has no role 'nobody'*",
    ])
    strict = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-strict-baseline")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.assert_outcomes(passed=7)
    strict.stdout.fnmatch_lines(["*they fail the run (strict baseline)"])


def test_a_version_1_baseline_cannot_gate_and_update_migrates_it(pytester: pytest.Pytester, project: Path) -> None:
    baseline = project / "evals" / "mini.baseline.json"
    baseline.write_text(json.dumps({"version": 1, "failures": {"mini.yaml::mini_002[admin]": {"scorer": "result_match", "reason": "old"}}}))
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*baseline version 1 does not record the mode*--nl2sql-update-baseline*"])
    _break(project, "mini_002")
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-update-baseline")
    result.assert_outcomes(passed=5, failed=1, xfailed=1)  # the v1 entry, read as mode plans, still gates this run
    result.stdout.fnmatch_lines(["*mini.baseline.json: 1 added, 0 removed (fixed), 0 removed (stale), 1 kept (migrated from version 1)"])
    data = json.loads(baseline.read_text())
    assert data["version"] == 2
    assert {(e["case"], e["role"], e["mode"]) for e in data["failures"]} == {("mini_002", "admin", "plans"), ("mini_002", "viewer", "plans")}


def test_the_short_summary_line_carries_the_reason(pytester: pytest.Pytester, project: Path) -> None:
    _break(project, "mini_002")
    for extra in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 and admin", "-rf", "-p", "no:cacheprovider", *extra)
        result.stdout.fnmatch_lines(["FAILED evals/mini.yaml::mini_002?admin? - result_match: the answer has 2 col*"])
    ci = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_002 and admin", "-rf", "-p", "no:cacheprovider", "-vv")
    ci.stdout.fnmatch_lines(["FAILED evals/mini.yaml::mini_002?admin? - result_match: the answer has 2 columns, the gold has 1"])


def test_the_shipped_routing_baseline_gates_only_mode_retrieval() -> None:
    from pytest_nl2sql.reporting.baseline import Baseline

    shipped = Path(__file__).resolve().parents[2] / "suites" / "routing.baseline.json"
    b = Baseline.load(shipped)
    assert b.version == 2 and b.entries
    assert {e.mode for e in b.entries.values()} == {"retrieval"}
    assert {e.scorer for e in b.entries.values()} == {"routing"}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_each_suite_of_a_run_is_gated_by_its_own_baseline(pytester: pytest.Pytester, project: Path, workers: str) -> None:
    """The baseline is looked up once per suite of a run (plugin/run.py, ``baseline_for``):
    two suites, the same broken case in each, a baseline beside the second one only."""
    _break(project, "mini_002")
    other = project / "evals" / "other.yaml"
    other.write_text((project / "evals" / "mini.yaml").read_text())
    _write_baseline(project / "evals" / "other.baseline.json", ["other.yaml::mini_002[admin]", "other.yaml::mini_002[viewer]"])
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-suite", "evals/other.yaml", "-n", workers, "-rfx")
    result.assert_outcomes(passed=10, failed=2, xfailed=2)
    result.stdout.fnmatch_lines_random([
        "FAILED evals/mini.yaml::mini_002?admin?*", "FAILED evals/mini.yaml::mini_002?viewer?*",
        "XFAIL evals/other.yaml::mini_002?admin?*", "XFAIL evals/other.yaml::mini_002?viewer?*",
    ])
