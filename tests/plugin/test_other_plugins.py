"""The plugin beside the pytest plugins people already use (issue 27 F): without the terminal
plugin, under pytest-timeout, under allure-pytest, and pytest's own --tb styles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HANG_CONFTEST = """
import time, pytest
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "mini_002[admin]" in item.nodeid:
        time.sleep(60)
    return (yield)
"""


def _break(project: Path) -> None:
    from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows

    update_rows(project / "evals" / "mini.yaml", {"mini_002": RowsUpdate([{"x": 1}])})


def test_runs_without_the_terminal_plugin(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:terminal", "-p", "no:cacheprovider", "--nl2sql-out", "r.json")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert len(json.loads((project / "r.json").read_text())["items"]) == 7


def test_a_timeout_is_pruned_and_keeps_its_reason(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(HANG_CONFTEST)
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-k", "mini_002 and admin",
        "--timeout", "2", "--timeout-method=signal", "--nl2sql-out", "r.json",
    )
    out = result.stdout.str()
    assert result.ret == 1, out
    failure = out.split("= FAILURES =")[1].split("short test summary")[0]
    assert "Timeout" in failure and "pluggy" not in failure and "_pytest" not in failure, failure
    assert len(failure.splitlines()) < 40, failure
    record = json.loads((project / "r.json").read_text())["items"][0]
    assert record["error"].startswith("Failed: Timeout"), record["error"]


@pytest.mark.parametrize(("style", "most"), [("line", 1), ("short", 12)])
def test_tb_styles_are_honoured(pytester: pytest.Pytester, project: Path, style: str, most: int) -> None:
    _break(project)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-k", "mini_002 and admin", f"--tb={style}")
    out = result.stdout.str()
    assert result.ret == 1
    shown = out.split("= FAILURES =")[1].split("= nl2sql =")[0].strip().splitlines() if "= FAILURES =" in out else []
    if style == "line":  # pytest's line style: no FAILURES section body beyond one line per failure
        assert "generated SQL" not in out and "result_match" in out, out
    else:
        assert "generated SQL:" not in "\n".join(shown) and len(shown) <= most + 3, shown


def test_allure_sees_a_failed_verdict_as_failed(pytester: pytest.Pytester, project: Path) -> None:
    pytest.importorskip("allure_pytest")
    _break(project)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "--alluredir", "allure")
    assert result.ret == 1
    results = [json.loads(p.read_text()) for p in (project / "allure").glob("*-result.json")]
    by_name = {r["fullName"] if "fullName" in r else r["name"]: r for r in results}
    statuses = {r["status"] for r in results}
    assert "broken" not in statuses and "failed" in statuses, statuses
    assert len({r["historyId"] for r in results}) == 7, sorted(by_name)  # each item its own test in allure


@pytest.mark.parametrize(("expr", "ids"), [
    ("aggregation and not viewer", {"mini_001[admin]", "mini_001[analyst]", "mini_002[admin]"}),
    ("refused", {"mini_001[viewer]"}),
])
def test_tags_roles_and_outcomes_are_registered_markers(pytester: pytest.Pytester, project: Path, expr: str, ids: set[str]) -> None:
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "--co", "-q", "--strict-markers", "-m", expr)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert {ln.split("::")[-1] for ln in result.stdout.lines if "::" in ln} == ids


FLAKY_CONFTEST = """
import os, pytest
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "mini_002[admin]" in item.nodeid and not os.path.exists("failed-once"):
        open("failed-once", "w").close()
        raise AssertionError("flaky once")
    return (yield)
"""


def test_reruns_are_recorded_and_shown_as_flaky(pytester: pytest.Pytester, project: Path) -> None:
    pytest.importorskip("pytest_rerunfailures")
    pytester.makeconftest(FLAKY_CONFTEST)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "--reruns", "2", "--nl2sql-out", "r.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*flaky*mini_002[[]admin[]] (passed after 1 rerun)*", "*7 passed, 1 rerun*"])
    data = json.loads((project / "r.json").read_text())
    assert data["summary"]["flaky"] == ["evals/mini.yaml::mini_002[admin]"]
    (record,) = [r for r in data["items"] if r["nodeid"].endswith("mini_002[admin]")]
    assert record["reruns"] == 1 and record["flaky"] is True


def test_loadscope_spreads_a_suite_by_case_and_loadfile_warns(
    pytester: pytest.Pytester, project: Path, xdist_by: tuple[str, ...]
) -> None:
    """With autoloading off, ``-p xdist.plugin`` registers xdist under that name: the case
    scheduler must be there all the same."""
    result = pytester.runpytest_subprocess(*xdist_by, "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadscope", "-v")
    assert result.ret == 0, result.stdout.str()
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        if "PASSED" in line and "::" in line and "[gw" in line:
            case = line.split("::")[1].split("[")[0].split()[-1] if "::" in line else ""
            workers.setdefault(line.split("[gw")[1][0], set()).add(case)
    assert len(workers) == 2, result.stdout.str()  # both workers ran cases of the one suite
    assert not workers["0"] & workers["1"]  # a case's roles stay together
    header = pytester.runpytest_subprocess(*xdist_by, "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "--co")
    header.stdout.fnmatch_lines(["nl2sql: --dist loadfile runs each suite file on one worker*"])
