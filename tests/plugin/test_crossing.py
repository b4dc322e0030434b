"""An item's record and keywords cross from an xdist worker to the controller as JSON strings
(plugin/under_xdist.py, issue 28), and arrive as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SEEN = """
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_report_from_serializable(config, data):
    if isinstance(data, dict) and data.get("when") == "call":
        with open("crossed.txt", "a") as fh:
            fh.write(f"{type(data.get('nl2sql_json')).__name__} {'nl2sql' in data} "
                     f"{type(data.get('nl2sql_keywords_json')).__name__} {'keywords' in data}\\n")
    report = yield
    if report is not None and getattr(report, "when", None) == "call":
        with open("arrived.txt", "a") as fh:
            fh.write(f"{type(getattr(report, 'nl2sql', None)).__name__} {type(report.keywords).__name__} {report.keywords.get('mini.yaml')}\\n")
    return report
"""


def test_a_record_crosses_as_one_string_and_arrives_whole(
    pytester: pytest.Pytester, project: Path, xdist_by: tuple[str, ...]
) -> None:
    pytester.makeconftest(SEEN)
    result = pytester.runpytest_subprocess(*xdist_by, "--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=7)
    assert (project / "crossed.txt").read_text().splitlines() == ["str False str False"] * 7
    assert (project / "arrived.txt").read_text().splitlines() == ["dict dict 1"] * 7  # the keywords as pytest sent them
    items = json.loads((project / "r.json").read_text())["items"]
    assert len(items) == 7 and all(i["verdict"] == "passed" and i["scores"] for i in items)


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "latency_s"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _items(path: Path) -> dict[str, dict]:
    """A report's items by node id, their timings left out (at every level: the steps have some)."""
    return {i["nodeid"]: _timeless(i) for i in json.loads(path.read_text())["items"]}


def test_the_controller_writes_each_record_as_it_crossed_and_a_rerun_one_as_it_changed(
    pytester: pytest.Pytester, project: Path
) -> None:
    """The controller's spool takes a worker's record text as it came (no second ``json.dumps``);
    the JSON report read back from it is the serial run's, and a record the controller changes
    (pytest-rerunfailures: ``reruns``, ``flaky``) is written with the change."""
    pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "--nl2sql-out", "serial.json").assert_outcomes(passed=7)
    pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "spread.json").assert_outcomes(passed=7)
    assert _items(project / "spread.json") == _items(project / "serial.json")

    pytest.importorskip("pytest_rerunfailures")
    from tests.plugin.test_other_plugins import FLAKY_CONFTEST

    pytester.makeconftest(FLAKY_CONFTEST)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--reruns", "2", "--nl2sql-out", "rerun.json")
    assert result.ret == 0, result.stdout.str()
    rerun = _items(project / "rerun.json")
    flaky = rerun.pop("evals/mini.yaml::mini_002[admin]")
    assert flaky["reruns"] == 1 and flaky["flaky"] is True
    serial = _items(project / "serial.json")
    del serial["evals/mini.yaml::mini_002[admin]"]
    assert rerun == serial
