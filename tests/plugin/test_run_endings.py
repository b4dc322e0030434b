"""Runs that end badly (issue 27 A, B): a worker killed, Ctrl-C, SIGTERM -- with real xdist
workers and real signals. A run that lost items says so in every report and never reads green."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main as cli_main
from tests.sigint import sigint_as_a_terminal_gives_it

KILL_CONFTEST = """
import os, signal
def pytest_runtest_call(item):
    if "mini_001[admin]" in item.nodeid and hasattr(item.config, "workerinput"):
        os.kill(os.getpid(), signal.SIGKILL)
"""

# in the serial process: tell the test we are in mini_002[admin], then wait for its signal
WAIT_CONFTEST = """
import os, time
def pytest_runtest_call(item):
    if "mini_002[admin]" in item.nodeid:
        open("in-item", "w").close()
        for _ in range(600):
            time.sleep(0.1)
"""

# a thread sends SIGINT to this process once the main thread is inside the adapter's execute
SIGINT_IN_QUERY_CONFTEST = """
import os, signal, sys, threading, pytest

def _watch(main):
    while True:
        frame = sys._current_frames().get(main)
        while frame is not None:
            if frame.f_code.co_name == "execute" and frame.f_code.co_filename.endswith("adapter.py"):
                os.kill(os.getpid(), signal.SIGINT)
                return
            frame = frame.f_back

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "mini_001[admin]" in item.nodeid:
        threading.Thread(target=_watch, args=(threading.main_thread().ident,), daemon=True).start()
    return (yield)
"""

SLOW_SQL = (
    "SELECT COUNT(*) AS n FROM Track a JOIN Track b ON a.Milliseconds > b.Milliseconds "
    "JOIN Track c ON c.Milliseconds > b.Milliseconds"
)


def _gate(*args: str) -> int:
    return cli_main(["report", "gate", *args])


def test_a_killed_worker_makes_an_incomplete_report_everywhere(
    pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makeconftest(KILL_CONFTEST)
    summary = project / "summary.md"
    os.environ["GITHUB_STEP_SUMMARY"] = str(summary)
    try:
        result = pytester.runpytest_subprocess(
            "--nl2sql-suite", "evals/mini.yaml", "-n", "2", "--max-worker-restart=0", "-p", "no:cacheprovider",
            "--nl2sql-out", "r.json", "--nl2sql-html", "r.html", "--junitxml", "j.xml",
        )
    finally:
        del os.environ["GITHUB_STEP_SUMMARY"]
    assert result.ret != 0
    run = json.loads((project / "r.json").read_text())["run"]
    assert run["complete"] is False and run["collected"] == 7
    missing = {m["nodeid"]: m["why"] for m in run["missing"]}
    assert missing["evals/mini.yaml::mini_001[admin]"].startswith("crashed")
    records = {r["nodeid"] for r in json.loads((project / "r.json").read_text())["items"]}
    assert len(records) + len(missing) == 7 and not records & set(missing)  # every item: a verdict or why not
    result.stdout.fnmatch_lines(["*INCOMPLETE RUN: * of 7 items got no verdict*"])
    assert "INCOMPLETE RUN" in (project / "r.html").read_text().split('id="summary"')[0]  # at the top
    assert "INCOMPLETE RUN" in summary.read_text()
    junit = (project / "j.xml").read_text()
    assert '<property name="nl2sql_complete" value="false"' in junit
    baseline = project / "b.json"
    baseline.write_text('{"version": 2, "failures": []}')
    capsys.readouterr()
    assert _gate(str(project / "r.json"), "--baseline", str(baseline)) == 3
    assert "INCOMPLETE RUN" in capsys.readouterr().err
    assert cli_main(["report", "merge", str(project / "r.json"), "-o", str(project / "m.json")]) == 3
    assert cli_main(["report", "compare", str(project / "r.json"), str(project / "r.json")]) == 3
    # opted in: says so, and the crashed item still fails the gate
    assert _gate(str(project / "r.json"), "--baseline", str(baseline), "--allow-incomplete") == 1
    out = capsys.readouterr().out
    assert "let through by --allow-incomplete" in out and "mini_001[admin] (crashed)" in out


def _start(project: Path, *args: str) -> subprocess.Popen[str]:
    with sigint_as_a_terminal_gives_it():  # the test sends it SIGINT
        return subprocess.Popen(
            [sys.executable, "-m", "pytest", "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", *args],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_run_writes_its_partial_report_marked_incomplete(pytester: pytest.Pytester, project: Path, sig: int) -> None:
    pytester.makeconftest(WAIT_CONFTEST)
    (project / "r.json").write_text('{"an earlier run": true}')
    proc = _start(project, "-v", "--nl2sql-out", "r.json", "--nl2sql-update-baseline")
    _wait_for(project / "in-item", proc)
    proc.send_signal(sig)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    data = json.loads((project / "r.json").read_text())
    assert data["run"]["complete"] is False
    whys = {m["why"].split(":")[0] for m in data["run"]["missing"]}
    assert whys == {"interrupted"}
    assert "baseline not updated: the run was interrupted" in out
    assert not (project / "evals" / "mini.baseline.json").exists()


def test_ctrl_c_during_a_sqlite_query_stops_the_run(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(SIGINT_IN_QUERY_CONFTEST)
    preds = project / "p.jsonl"
    preds.write_text(json.dumps({"id": "mini_001", "sql": SLOW_SQL}) + "\n")
    proc = _start(project, "-v", "-k", "mini_001 or mini_002", "--nl2sql-predictions", str(preds),
                  "--nl2sql-out", "r.json", "--nl2sql-update-baseline")
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out and "interrupted" not in json.dumps(
        json.loads((project / "r.json").read_text())["items"])
    assert not (project / "evals" / "mini.baseline.json").exists()


def test_collect_only_writes_no_report(pytester: pytest.Pytester, project: Path) -> None:
    (project / "r.json").write_text("the last real report")
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--co", "--nl2sql-out", "r.json", "--nl2sql-html", "r.html")
    assert result.ret == 0
    assert (project / "r.json").read_text() == "the last real report"
    assert not (project / "r.html").exists()
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-k", "nothing_matches", "--nl2sql-out", "r.json")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert (project / "r.json").read_text() == "the last real report"


EDIT_AND_KILL_CONFTEST = """
import os, signal
from pathlib import Path
def pytest_runtest_call(item):
    if "mini_002[admin]" in item.nodeid and hasattr(item.config, "workerinput") and not Path("edited").exists():
        Path("edited").write_text("")
        suite = Path("evals/mini.yaml")
        suite.write_text(suite.read_text().replace("- id: mini_001", "- id: mini_000\\n  question: Added during the run\\n  datasources: [chinook]\\n  status: approved\\n  origin: hand\\n  outcome: {admin: unanswerable}\\n  sql: null\\n  plan: {kind: not_answerable, reason: none}\\n- id: mini_001", 1))
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_replacement_worker_that_reads_an_edited_suite_fails_loudly(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(EDIT_AND_KILL_CONFTEST)
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "-n", "2", "--max-worker-restart=2", "-p", "no:cacheprovider", "--nl2sql-out", "r.json",
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0, out
    assert "the suite file changed during the run" in out, out
    data = json.loads((project / "r.json").read_text())
    nodeids = [r["nodeid"] for r in data["items"]]
    assert len(nodeids) == len(set(nodeids)) and "mini_000" not in " ".join(nodeids)  # nothing twice, nothing new
    assert data["run"]["complete"] is False
