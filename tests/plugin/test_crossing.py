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


def test_a_record_crosses_as_one_string_and_arrives_whole(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(SEEN)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=7)
    assert (project / "crossed.txt").read_text().splitlines() == ["str False str False"] * 7
    assert (project / "arrived.txt").read_text().splitlines() == ["dict dict 1"] * 7  # the keywords as pytest sent them
    items = json.loads((project / "r.json").read_text())["items"]
    assert len(items) == 7 and all(i["verdict"] == "passed" and i["scores"] for i in items)
