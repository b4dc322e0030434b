"""The run folder (issue 27 C.8, G.20): the cost ledger and the records' spool live in one
folder per run in the temp folder; a run removes it at its end, and the folders of runs killed
by SIGKILL are removed by the next run. Real signals, real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# in the serial process: tell the test we are in mini_002[admin], then wait for its signal
WAIT_CONFTEST = """
import time
def pytest_runtest_call(item):
    if "mini_002[admin]" in item.nodeid:
        open("in-item", "w").close()
        for _ in range(600):
            time.sleep(0.1)
"""


def _start(project: Path, tmp: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, TMPDIR=str(tmp)),
    )


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)


def _scratch(tmp: Path) -> list[str]:
    """What runs left in the temp folder: run folders (and their files), old-style ledgers."""
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if "nl2sql" in str(p.relative_to(tmp)))


def test_sigkill_leaves_the_ledger_in_the_run_folder_and_the_next_run_removes_it(
    pytester: pytest.Pytester, project: Path, tmp_path: Path
) -> None:
    pytester.makeconftest(WAIT_CONFTEST)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start(project, tmp, "--nl2sql-max-cost", "5", "-v")
    _wait_for(project / "in-item", proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    left = _scratch(tmp)
    folder = f"nl2sql-run-{proc.pid}-"
    assert any(p.startswith(folder) and p.endswith("/ledger.txt") for p in left), left
    assert any(p.startswith(folder) and p.endswith("/records.jsonl") for p in left), left  # the spool: items before the kill
    assert not [p for p in left if p.startswith("nl2sql-ledger-")], left  # never loose in the temp folder

    (project / "in-item").unlink()
    again = _start(project, tmp, "--nl2sql-max-cost", "5", "-k", "mini_001", "--nl2sql-out", "r.json")
    out = again.communicate(timeout=300)[0]
    assert again.returncode in (0, 1), out
    assert _scratch(tmp) == []  # the dead run's folder is gone, and this run's own too
    assert json.loads((project / "r.json").read_text())["summary"]["items"] >= 1


def test_sigterm_removes_the_run_folder(pytester: pytest.Pytester, project: Path, tmp_path: Path) -> None:
    pytester.makeconftest(WAIT_CONFTEST)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start(project, tmp, "--nl2sql-max-cost", "5", "-v", "--nl2sql-out", "r.json")
    _wait_for(project / "in-item", proc)
    assert [p for p in _scratch(tmp) if p.endswith("/ledger.txt")]  # the run's ledger is in its folder
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert _scratch(tmp) == []
    data = json.loads((project / "r.json").read_text())  # written from the spool before it went
    assert data["run"]["complete"] is False and data["summary"]["items"] >= 1


def test_the_summary_from_the_spool_is_the_summary_of_the_whole_records(pytester: pytest.Pytester, project: Path) -> None:
    """The controller sums slim views of the records (reporting.spool); the summary must be the
    one the whole records give, and the report's items the whole records, one a line."""
    from pytest_nl2sql.reporting.report import RunReport

    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "--nl2sql-out", "r.json")
    assert result.ret in (0, 1)
    text = (project / "r.json").read_text()
    data = json.loads(text)
    assert data["items"] and all(i["question"] for i in data["items"]) and any(i["gold_sql"] for i in data["items"])
    run = {k: v for k, v in data["run"].items()}
    assert RunReport(data["items"], run).summary() == data["summary"]
    assert text.count('\n    {"') == len(data["items"])  # one item a line
