"""Under xdist the controller reads the suites while its workers start, and the workers read
them from the cache it fills (plugin/under_xdist.py, "Starting"; issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: How each conftest below reads what the processes of a run logged so far.
EVENTS = """
def _events():
    try:
        with open("events.txt") as fh:
            return fh.read()
    except OSError:
        return ""
"""

#: Every process of the run logs each suite it parses from YAML, and when its workers were started
#: and configured. The controller parses only once both workers are up (or 20 s passed), so a
#: worker that did not wait for it would surely parse the suite itself.
SLOW_PARSE = EVENTS + """
import os, time
from pytest_nl2sql.suitefile import loader

_parse = loader.parse_suite
WHO = ["controller"]  # this process (PYTEST_XDIST_WORKER may be the outer run's)

def parse_suite(*args, **kwargs):
    who = WHO[0]
    if who == "controller" and not os.environ.get("NO_WAIT"):
        deadline = time.time() + 20
        while time.time() < deadline and _events().count(" configured ") < 2:
            time.sleep(0.05)
    with open("parsed.txt", "a") as fh:
        fh.write(who + "\\n")
    suite = _parse(*args, **kwargs)
    with open("events.txt", "a") as fh:
        fh.write(f"{time.time()} parsed {who}\\n")
    return suite

loader.parse_suite = parse_suite

import pytest

@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    with open("events.txt", "a") as fh:
        fh.write(f"{time.time()} spawned {node.gateway.id}\\n")

def pytest_configure(config):
    if hasattr(config, "workerinput"):
        WHO[0] = config.workerinput["workerid"]
        with open("events.txt", "a") as fh:
            fh.write(f"{time.time()} configured {config.workerinput['workerid']}\\n")
"""


@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["header", "quiet"])
def test_the_workers_read_the_suite_the_controller_parsed_while_they_started(
    pytester: pytest.Pytester, project: Path, quiet: list[str]
) -> None:
    pytester.makeconftest(SLOW_PARSE)
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "r.json", *quiet
    )
    result.assert_outcomes(passed=7)
    header = [line for line in result.outlines if line.startswith("nl2sql: mini.yaml")]
    assert header == ([] if quiet else ["nl2sql: mini.yaml 4 approved cases x 3 roles = 7 items, 1 drafts, 1 retired (mode plans)"])
    assert (project / "parsed.txt").read_text().splitlines() == ["controller"]
    events = sorted((float(t), what, who) for t, what, who in (line.split() for line in (project / "events.txt").read_text().splitlines()))
    order = [what for _, what, _ in events]
    # the workers were started before the controller read the suite, and it ended after both were up
    assert order == ["spawned", "spawned", "configured", "configured", "parsed"], events
    items = json.loads((project / "r.json").read_text())["items"]
    assert sorted(i["verdict"] for i in items) == ["passed"] * 7


def test_with_the_cache_off_each_process_parses_and_the_run_is_whole(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(SLOW_PARSE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NL2SQL_CACHE_DIR", "off")
        mp.setenv("NO_WAIT", "1")  # no lock: the controller parses before its workers start
        result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly")
    result.assert_outcomes(passed=7)
    assert set((project / "parsed.txt").read_text().splitlines()) == {"controller", "gw0", "gw1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nl2sql-roles", "nobody"], "*--nl2sql-roles: no case names the role 'nobody'*"),
        (["--nl2sql-cases", "no-such-tag"], "*--nl2sql-cases: no case has the tag or datasource 'no-such-tag'*"),
        # the engine is built (and its setup checked) once the workers are starting, too
        (["--nl2sql-predictions", "nowhere.jsonl"], "*nowhere.jsonl*"),
        (["--nl2sql-llm", "nosuch"], "*--nl2sql-llm nosuch*"),
    ],
    ids=["roles", "cases", "engine-setup", "llm-name"],
)
def test_an_engine_or_a_suite_the_controller_refuses_after_the_workers_started_is_one_usage_error(
    pytester: pytest.Pytester, project: Path, args: list[str], message: str
) -> None:
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert len([line for line in result.errlines if line.startswith("ERROR:")]) == 1
    text = "\n".join(result.outlines + result.errlines)
    assert "Traceback" not in text and "INTERNALERROR" not in text and "crashed" not in text
    assert "passed" not in text and "failed" not in text  # nothing ran


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nl2sql-regenerate"], "*--nl2sql-regenerate rewrites suites once, in one process*"),
        (["--nl2sql-seed", "chinook", "--nl2sql-seed-out", "drafts.yaml"], "*--nl2sql-seed writes one drafts file: run it without -n*"),
        # every item on every worker: each case asked twice, one answer of each kept
        (["--dist", "each"], "*--dist each runs every item on every worker*--nl2sql-repeat K*"),
    ],
    ids=["regenerate", "seed", "dist-each"],
)
def test_an_option_mistake_is_found_before_any_worker_starts(
    pytester: pytest.Pytester, project: Path, args: list[str], message: str
) -> None:
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", *args, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "bringing up nodes" not in "\n".join(result.outlines)
    assert "created: 2/2 workers" not in "\n".join(result.outlines)
    assert not (project / "drafts.yaml").exists()


#: The controller logs, as xdist starts each worker, which parts of the pipeline it has imported.
IMPORTED_AT_SPAWN = """
import json, sys
import pytest

PIPELINE = ("pytest_nl2sql.plugin.session", "pytest_nl2sql.scoring.scorers", "pytest_nl2sql.engine.protocol",
            "pytest_nl2sql.reporting.report")

@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    with open("imported.txt", "a") as fh:
        fh.write(json.dumps([m for m in PIPELINE if m in sys.modules]) + "\\n")
"""


def test_the_controller_starts_its_workers_before_it_imports_the_pipeline(
    pytester: pytest.Pytester, project: Path, tmp_path: Path
) -> None:
    pytester.makeconftest(IMPORTED_AT_SPAWN)
    temp = tmp_path / "temp"  # the run's temp folder: where its run folder (reporting.spool) is made
    temp.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(temp))
        result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=7)
    # the workers were started at once; the controller imported the rest while they started
    assert (project / "imported.txt").read_text().splitlines() == ["[]", "[]"]
    # and the run is the same: the header (once the workers started), the report, the workers counted
    assert "nl2sql: mini.yaml 4 approved cases x 3 roles = 7 items, 1 drafts, 1 retired (mode plans)" in result.outlines
    created = result.outlines.index("created: 2/2 workers")
    assert created < result.outlines.index("nl2sql: mini.yaml 4 approved cases x 3 roles = 7 items, 1 drafts, 1 retired (mode plans)")
    data = json.loads((project / "r.json").read_text())
    assert data["run"]["workers"] == 2 and data["run"]["complete"] is True
    assert sorted(i["verdict"] for i in data["items"]) == ["passed"] * 7
    assert not list(temp.glob("nl2sql-run-*"))  # the stand-in's run folder went with the session's


@pytest.mark.parametrize(
    "args",
    [["--nl2sql-max-cost", "5"], ["--dist", "loadfile"]],
    ids=["a-cost-ledger-to-share", "loadfile-header"],
)
def test_a_run_whose_controller_needs_the_pipeline_first_imports_it_at_configure(
    pytester: pytest.Pytester, project: Path, args: list[str]
) -> None:
    pytester.makeconftest(IMPORTED_AT_SPAWN)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly", *args)
    result.assert_outcomes(passed=7)
    lines = [json.loads(line) for line in (project / "imported.txt").read_text().splitlines()]
    assert len(lines) == 2 and all("pytest_nl2sql.plugin.session" in line for line in lines)
    if "loadfile" in args:
        result.stdout.fnmatch_lines(["nl2sql: --dist loadfile runs each suite file on one worker*"])


#: The controller's suite checks wait until both workers have collected (or 20 s), then log; each
#: worker logs when it has collected. A worker that waited for the controller's lock would
#: collect only after the controller's log line.
SLOW_CHECKS = EVENTS + """
import os, time
import pytest
from pytest_nl2sql.plugin.run import Nl2sqlRun

_checks = Nl2sqlRun.precheck_suites


def precheck_suites(self, *args, **kwargs):
    if not hasattr(self.config, "workerinput") and os.environ.get("SLOW_CHECKS"):
        deadline = time.time() + 20
        while time.time() < deadline and _events().count(" collected ") < 2:
            time.sleep(0.05)
    out = _checks(self, *args, **kwargs)
    if not hasattr(self.config, "workerinput"):
        with open("events.txt", "a") as fh:
            fh.write(f"{time.time()} checked controller\\n")
    return out

Nl2sqlRun.precheck_suites = precheck_suites

def pytest_collection_finish(session):
    if hasattr(session.config, "workerinput"):
        with open("events.txt", "a") as fh:
            fh.write(f"{time.time()} collected {session.config.workerinput['workerid']}\\n")
"""


def test_on_a_warm_cache_the_workers_do_not_wait_for_the_controllers_checks(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(SLOW_CHECKS)
    args = ("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "-p", "no:randomly")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=7)  # cold: the controller fills the cache
    (project / "events.txt").unlink()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLOW_CHECKS", "1")
        result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=7)
    events = sorted((float(t), what) for t, what, _ in (line.split() for line in (project / "events.txt").read_text().splitlines()))
    # the suite was in the cache: each worker read it from there and collected while the controller still checked
    assert [what for _, what in events] == ["collected", "collected", "checked"], events
