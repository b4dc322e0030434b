"""pytest-testmon beside this plugin (issue 27 F.18): testmon selects items by the Python code
they ran, which does not change when nl2sql.yaml, a suite or a database does; the plugin puts a
digest of those files in testmon's environment name, so such a change runs the items again.
Real pytest-testmon (in the test extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("testmon", reason="pytest-testmon is in the test extra: pip install -e '.[test]'")

ARGS = ("--testmon", "--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-p", "no:xdist")


def _ran(result: pytest.RunResult) -> int:
    outcomes = result.parseoutcomes()
    return outcomes.get("passed", 0) + outcomes.get("failed", 0)


def test_a_changed_role_runs_the_items_again_under_testmon(pytester: pytest.Pytester, project: Path) -> None:
    first = pytester.runpytest_subprocess(*ARGS)
    assert first.ret == 0 and _ran(first) > 0
    again = pytester.runpytest_subprocess(*ARGS)
    assert _ran(again) == 0  # nothing changed: testmon deselects every item
    cfg = project / "nl2sql.yaml"
    text = cfg.read_text()
    assert "tables: [chinook.Customer, chinook.Employee]" in text
    cfg.write_text(text.replace("tables: [chinook.Customer, chinook.Employee]", "tables: [chinook.Employee]"))  # viewer sees customers
    changed = pytester.runpytest_subprocess(*ARGS)
    assert _ran(changed) == _ran(first)  # every item ran again ...
    assert changed.ret == 1 and changed.parseoutcomes().get("failed", 0) >= 1  # ... and the viewer's refusal now fails
