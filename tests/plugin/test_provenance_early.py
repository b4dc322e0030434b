"""On the controller of an xdist run, ``run.provenance`` (the suites' and cases' digests, each
datasource's schema fingerprint, the git commit, the engine) is collected on a thread while the
workers start and run, not after the last item: its git calls and introspection no longer hold
up the end of the run. The report says the same as a serial run's."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

#: Records, in the controller, the thread that collected the provenance and whether any item's
#: report had arrived by then.
WATCH = """
import threading
from pytest_nl2sql.reporting import provenance

_collect = provenance.collect
REPORTS = []
WORKER = []  # PYTEST_XDIST_WORKER may be the outer run's

def pytest_configure(config):
    WORKER.append(hasattr(config, "workerinput"))

def collect(*args, **kwargs):
    if not WORKER[0]:
        with open("collected.txt", "a") as fh:
            fh.write(f"{threading.current_thread().name} {len(REPORTS)}\\n")
    return _collect(*args, **kwargs)

provenance.collect = collect

def pytest_runtest_logreport(report):
    REPORTS.append(report.nodeid)
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_under_xdist_the_provenance_is_collected_while_the_run_goes_on_and_says_what_a_serial_run_says(
    pytester: pytest.Pytester, project: Path
) -> None:
    _git(project, "init", "-q")
    _git(project, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A")
    _git(project, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "the project")
    (project / ".gitignore").write_text("*.json\ncollected.txt\nconftest.py\n.nl2sql-cache/\n")
    pytester.makeconftest(WATCH)
    serial = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "--nl2sql-out", "serial.json")
    serial.assert_outcomes(passed=7)
    assert (project / "collected.txt").read_text().split() == ["MainThread", "21"]  # serial: at the end, as before
    (project / "collected.txt").unlink()

    spread = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "spread.json")
    spread.assert_outcomes(passed=7)
    thread, reports = (project / "collected.txt").read_text().split()
    assert thread == "nl2sql-provenance"
    assert int(reports) < 21, reports  # begun before the last of the 7 x 3 reports came in

    first = json.loads((project / "serial.json").read_text())["run"]["provenance"]
    second = json.loads((project / "spread.json").read_text())["run"]["provenance"]
    assert second == first
    assert first["git"]["commit"] and first["git"]["dirty"] is False
    assert first["datasources"]["chinook"]["fingerprint"] and set(first["suites"]["mini.yaml"]["cases"])
