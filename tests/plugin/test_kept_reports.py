"""What the controller keeps of an nl2sql item's test reports (plugin/memory.py, issue 27 G.20):
slim reports once every plugin has read them, and a terminal summary that reads the same."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.plugin.test_other_plugins import _break

# a passed item with captured output (-rP prints it) and a count of what the terminal reporter holds
CONFTEST = """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "mini_001[admin]" in item.nodeid:
        item.add_report_section("call", "stdout", "hello from mini_001")
    return (yield)

def _kept(terminalreporter):
    ours = [r for reports in terminalreporter.stats.values() for r in reports if isinstance(r, pytest.TestReport) and "mini.yaml::" in r.nodeid]
    slim = sum(type(r).__name__ == "SlimReport" for r in ours)
    passed = sum(r.passed for r in ours)
    keywords = sum(bool(r.keywords) for r in ours if not r.skipped)
    records = sum(hasattr(r, "nl2sql") for r in ours)
    return f"reports={len(ours)} passed={passed} slim={slim} with-keywords={keywords} records={records}"

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, config):
    if not hasattr(config, "workerinput"):
        terminalreporter.write_line(f"KEPT {_kept(terminalreporter)}")

def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):  # what a worker keeps once it has sent its reports
        items = [i for i in session.items if "mini.yaml::" in i.nodeid]
        run = "kept" if session.config.pluginmanager.has_plugin("nl2sql_kept") else "whole"
        with open(f"{run}-{session.config.workerinput['workerid']}.txt", "w") as fh:
            fh.write(f"{_kept(session.config.pluginmanager.get_plugin('terminalreporter'))} items-with-records={sum(i.record is not None for i in items)}")
"""

TIMES = re.compile(r"\d+\.\d+s|\(\d+:\d+:\d+\)|\[gw\d\]|\[\s*\d+%\]")


def _summary(out: str) -> list[str]:
    """The output from the first progress line on, timings, worker names and the junit file's
    name blanked, the --durations lines (in order of times that differ from run to run) sorted."""
    lines = out.replace("whole.xml", "kept.xml").splitlines()
    start = next(i for i, ln in enumerate(lines) if "mini.yaml" in ln and ("PASSED" in ln or "FAILED" in ln))
    out_lines, durations = [], []
    for line in lines[start:]:
        if line.startswith("KEPT "):
            continue
        if line.startswith("="):
            out_lines += sorted(durations)
            durations = []
        line = TIMES.sub("_", line)
        (durations if durations or "slowest durations" in line else out_lines).append(line)
    return out_lines + sorted(durations)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_terminal_summary_reads_the_same_with_slim_reports(pytester: pytest.Pytester, project: Path, workers: str) -> None:
    _break(project)  # mini_002 fails (two roles): a failure section, an -rA FAILED line, a --lf entry
    pytester.makeconftest(CONFTEST)
    args = ["--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-n", workers, "-v", "-rA", "--durations=0", "--durations-min=0"]
    kept = pytester.runpytest_subprocess(*args, "--junitxml=kept.xml")
    whole = pytester.runpytest_subprocess(*args, "--junitxml=whole.xml", "-p", "no:nl2sql_kept")
    assert kept.ret == whole.ret == 1, kept.stdout.str()
    counts = next(ln for ln in kept.stdout.lines if ln.startswith("KEPT "))
    assert counts == "KEPT reports=21 passed=19 slim=19 with-keywords=0 records=0", counts  # 7 items x setup, call, teardown
    assert next(ln for ln in whole.stdout.lines if ln.startswith("KEPT ")) == "KEPT reports=21 passed=19 slim=0 with-keywords=21 records=0"
    if workers != "0":  # each worker slims the reports it sent, and its items keep no record
        kept_by_worker = [p.read_text() for p in sorted(pytester.path.glob("kept-gw*.txt"))]
        assert len(kept_by_worker) == 2 and all(
            re.fullmatch(r"reports=(\d+) passed=\d+ slim=\d+ with-keywords=0 records=0 items-with-records=0", k) for k in kept_by_worker
        ), kept_by_worker
        whole_by_worker = "".join(p.read_text() for p in pytester.path.glob("whole-gw*.txt"))
        assert "records=0 " not in whole_by_worker  # without the report keeper (plugin.memory), a worker kept every record it sent
    ours, theirs = _summary(kept.stdout.str()), _summary(whole.stdout.str())
    if workers != "0":  # the order items finish in differs between two runs on two workers
        ours, theirs = sorted(ours), sorted(theirs)
    assert ours == theirs
    text = kept.stdout.str()
    assert "hello from mini_001" in text.split("= PASSES =")[1]  # -rP: a passed item's captured output
    assert "FAILED evals/mini.yaml::mini_002[admin]" in text and "PASSED evals/mini.yaml::mini_001[viewer]" in text
    junit = [ET.parse(pytester.path / name).getroot() for name in ("kept.xml", "whole.xml")]
    cases = [sorted((c.get("name"), [x.tag for x in c]) for c in root.iter("testcase")) for root in junit]
    assert cases[0] == cases[1] and len(cases[0]) == 7

    last_failed = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "--lf", "-q")
    outcomes = last_failed.parseoutcomes()  # the --lf cache saw both failures, and only them
    assert outcomes.get("failed") == 2 and "passed" not in outcomes, last_failed.stdout.str()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_passed_setup_and_teardown_reports_are_not_kept_unless_durations_asks(pytester: pytest.Pytester, project: Path, workers: str) -> None:
    """Without --durations nothing reads a passed setup or teardown report at the end, and
    pytest's failure summary scans all of them once per failure: they are not kept, and the
    summary (failures, -rA lines, captured output of -rP) reads the same."""
    _break(project)
    pytester.makeconftest(CONFTEST)
    args = ["--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-n", workers, "-v", "-rA"]
    kept = pytester.runpytest_subprocess(*args)
    whole = pytester.runpytest_subprocess(*args, "-p", "no:nl2sql_kept")
    assert kept.ret == whole.ret == 1, kept.stdout.str()
    counts = next(ln for ln in kept.stdout.lines if ln.startswith("KEPT "))
    # one call report an item, and mini_001[admin]'s teardown: it carries the captured output (-rP)
    assert counts == "KEPT reports=8 passed=6 slim=6 with-keywords=0 records=0", counts
    assert next(ln for ln in whole.stdout.lines if ln.startswith("KEPT ")) == "KEPT reports=21 passed=19 slim=0 with-keywords=21 records=0"
    ours, theirs = _summary(kept.stdout.str()), _summary(whole.stdout.str())
    if workers != "0":
        ours, theirs = sorted(ours), sorted(theirs)
    assert ours == theirs
    assert "hello from mini_001" in kept.stdout.str().split("= PASSES =")[1]
