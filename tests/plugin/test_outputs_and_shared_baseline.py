"""Outputs that cannot be written and a baseline shared by runs (issue 27 C, E): each output on
its own, one line per failure and exit 6; a locked baseline merged on write, with real
concurrent pytest processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.reporting.outputs import OUTPUT_ERROR

FAIL_CONFTEST = """
import os
def pytest_runtest_call(item):
    if os.environ.get("FAIL_ITEM") and os.environ["FAIL_ITEM"] in item.nodeid:
        raise AssertionError("forced failure")
"""

# every run waits for the others before its session ends, then reads the baseline slowly: without
# the lock, each run's read-modify-write would drop the entries the others wrote
RACE_CONFTEST = FAIL_CONFTEST + """
import time, pytest
from pytest_nl2sql.reporting import baseline

_updated = baseline.Baseline.updated
def _slow_updated(self, *args, **kwargs):
    time.sleep(0.5)
    return _updated(self, *args, **kwargs)
baseline.Baseline.updated = _slow_updated

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    open(f"ready-{os.getpid()}", "w").close()
    for _ in range(1200):
        if len(list(__import__("pathlib").Path(".").glob("ready-*"))) >= int(os.environ["RUNS"]):
            return
        time.sleep(0.1)
"""


def test_each_output_is_written_on_its_own(pytester: pytest.Pytester, project: Path) -> None:
    (project / "afile").write_text("")
    (project / "loop1").symlink_to("loop2")
    (project / "loop2").symlink_to("loop1")
    (project / "a folder").mkdir()
    pytester.makeconftest(FAIL_CONFTEST)
    result = _run(project, "--nl2sql-update-baseline", "--nl2sql-out", "a folder", "--nl2sql-html", "loop1",
                  "--junitxml", "afile/j.xml", "--nl2sql-baseline", "b.json", fail="mini_002[admin]")
    out = result.stdout
    assert result.returncode == OUTPUT_ERROR, out
    assert "nl2sql: cannot write --nl2sql-out a folder: Is a directory" in out
    assert "nl2sql: cannot write --nl2sql-html loop1: Too many levels of symbolic links" in out
    assert "nl2sql: cannot write --junitxml " in out and "afile/j.xml" in out
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert "1 failed" in out  # the summary is still printed
    assert json.loads((project / "b.json").read_text())["failures"][0]["case"] == "mini_002"  # still written


def test_a_read_only_baseline_is_an_error_not_replaced(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(FAIL_CONFTEST)
    baseline = project / "b.json"
    baseline.write_text('{"version": 2, "failures": []}\n')
    baseline.chmod(0o444)
    result = _run(project, "--nl2sql-update-baseline", "--nl2sql-baseline", "b.json", "--nl2sql-out", "r.json", fail="mini_002[admin]")
    assert result.returncode == OUTPUT_ERROR, result.stdout
    assert "nl2sql: cannot write --nl2sql-baseline b.json: the file is read-only" in result.stdout
    assert baseline.read_text() == '{"version": 2, "failures": []}\n'
    assert json.loads((project / "r.json").read_text())["run"]["complete"] is True  # the others written


@pytest.mark.parametrize("update", [False, True])
def test_a_baseline_naming_a_folder_or_a_symlink_loop_is_an_error(pytester: pytest.Pytester, project: Path, update: bool) -> None:
    (project / "loop1").symlink_to("loop2")
    (project / "loop2").symlink_to("loop1")
    for target in ("evals", "loop1"):
        result = _run(project, "--nl2sql-baseline", target, *(["--nl2sql-update-baseline"] if update else []))
        assert result.returncode in (pytest.ExitCode.USAGE_ERROR, OUTPUT_ERROR), result.stdout
        assert f"{target}" in result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr


def test_concurrent_updates_of_one_baseline_keep_every_run_s_entries(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(RACE_CONFTEST)
    items = ["mini_001[admin]", "mini_001[analyst]", "mini_002[admin]", "mini_002[viewer]"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pytest", "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-q",
             "-k", item.replace("[", " and ").rstrip("]"), "--nl2sql-update-baseline"],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**_env(), "FAIL_ITEM": item, "RUNS": str(len(items))},
        )
        for item in items
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == pytest.ExitCode.TESTS_FAILED for p in procs), outs
    entries = json.loads((project / "evals" / "mini.baseline.json").read_text())["failures"]
    assert sorted(f"{e['case']}[{e['role']}]" for e in entries) == sorted(items)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}


def _run(project: Path, *args: str, fail: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", *args],
        cwd=project, capture_output=True, text=True, env={**_env(), "FAIL_ITEM": fail}, timeout=600,
    )
