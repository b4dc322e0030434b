"""An item's trip is one way: scheduler.answer (schedule and ask every attempt) -> judge -> record.

The stages are wrapped in the run's own process (a conftest.py in the project) and each call is
written to a log as it starts and ends; the test reads the log back, item by item: every stage
is called once, in that order, none inside another, and no stage is visited again after the
item left it -- with repeats, prefetching threads, the cost cap and xdist workers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.full.conftest import FULL, serve  # noqa: F401  (shared fixtures)
from tests.plugin.conftest import project  # noqa: F401  (shared fixtures)

WRAPPERS = '''
import json, os, threading

import pytest_nl2sql.plugin.concurrency as concurrency
import pytest_nl2sql.plugin.run as run

LOG = os.environ["NL2SQL_TRIP_LOG"]
_write = threading.Lock()


def _note(stage, nodeid, edge):
    line = json.dumps([os.getpid(), stage, nodeid, edge, threading.current_thread() is threading.main_thread()])
    with _write, open(LOG, "a") as f:
        f.write(line + "\\n")


def _wrap(owner, name, nodeid_of):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        nodeid = nodeid_of(*args)
        _note(name, nodeid, ">")
        try:
            return original(*args, **kwargs)
        finally:
            _note(name, nodeid, "<")

    setattr(owner, name, wrapper)


_wrap(concurrency.Scheduler, "answer", lambda self, item: item.nodeid)
_wrap(concurrency, "ask", lambda run_, item, attempt=0: item.nodeid)
_wrap(run.Nl2sqlRun, "judge", lambda self, item, asked: item.nodeid)
_wrap(run.Nl2sqlRun, "record", lambda self, item, judgement: item.nodeid)
_wrap(run, "make_record", lambda item, *rest: item.nodeid)
_wrap(run, "failure_text", lambda item, *rest: item.nodeid)
'''

#: what pytest's thread does for one item, in order, each once, none nested in another
ONE_WAY = ["answer>", "answer<", "judge>", "judge<", "record>", "record<"]


def _trips(log: Path) -> dict[tuple[int, str], list[tuple[str, bool]]]:
    """(process, node id) -> the item's stage events, in the order they happened."""
    trips: dict[tuple[int, str], list[tuple[str, bool]]] = defaultdict(list)
    for line in log.read_text().splitlines():
        pid, stage, nodeid, edge, main = json.loads(line)
        trips[(pid, nodeid)].append((stage + edge, main))
    return trips


def _assert_one_way(trips: dict[tuple[int, str], list[tuple[str, bool]]], repeat: int) -> int:
    """Check every item that ran in a process (see the module docstring); the items checked."""
    ran = 0
    for (_pid, nodeid), events in trips.items():
        names = [e for e, _ in events]
        if "answer>" not in names:
            # prefetched here, then run by another xdist worker: asked, never answered here
            assert set(names) <= {"ask>", "ask<"}, (nodeid, names)
            continue
        ran += 1
        on_pytest_thread = [e for e, main in events if main and not e.startswith(("ask", "make_record", "failure_text"))]
        assert on_pytest_thread == ONE_WAY, (nodeid, names)
        answered, judging, judged = names.index("answer<"), names.index("judge>"), names.index("judge<")
        recording, recorded = names.index("record>"), names.index("record<")
        asks = [i for i, e in enumerate(names) if e == "ask<"]
        assert len(asks) == repeat and max(asks) < answered, (nodeid, names)  # every attempt asked, all before judging
        assert names.count("ask>") == repeat
        assert all(judging < i < judged for i, e in enumerate(names) if e.startswith("failure_text")), (nodeid, names)
        made = [i for i, e in enumerate(names) if e.startswith("make_record")]
        assert made and all(recording < i < recorded for i in made), (nodeid, names)  # records are made by record only
    return ran


@pytest.mark.parametrize(
    ("options", "repeat"),
    [
        pytest.param(("--nl2sql-concurrency", "1"), 1, id="serial, no threads"),
        pytest.param(("--nl2sql-concurrency", "4", "--nl2sql-repeat", "2"), 2, id="prefetching, repeats"),
        pytest.param(("-n", "2", "--nl2sql-concurrency", "3", "--nl2sql-repeat", "2"), 2, id="xdist workers"),
    ],
)
def test_every_item_goes_once_through_answer_judge_record(
    pytester: pytest.Pytester, project: Path, serve, monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...], repeat: int  # noqa: F811
) -> None:
    server, plans = serve(hold_s=0.05, flaky=True)  # mini_002 fails on alternate calls: judge writes failure texts
    pytester.makeconftest(WRAPPERS)
    log = project / "trip.log"
    monkeypatch.setenv("NL2SQL_TRIP_LOG", str(log))
    result = pytester.runpytest_subprocess(*FULL, *options, "--nl2sql-out", "r.json")
    assert result.ret == 1  # the flaky item failed, the others passed
    assert plans.calls == 8 * repeat
    assert _assert_one_way(_trips(log), repeat) == 8
    data = json.loads((project / "r.json").read_text())
    assert len(data["items"]) == 8 and any(i["verdict"] == "failed" for i in data["items"])
    assert any("failure_text>" in e for events in _trips(log).values() for e, _ in events)


def test_an_item_the_cost_cap_skips_is_recorded_once_and_never_judged_again(
    pytester: pytest.Pytester, project: Path, serve, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    server, plans = serve(hold_s=0.05)  # each call costs $0.01; the cap lets 3 through (one in flight may overspend)
    pytester.makeconftest(WRAPPERS)
    log = project / "trip.log"
    monkeypatch.setenv("NL2SQL_TRIP_LOG", str(log))
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "2", "--nl2sql-max-cost", "0.025", "--nl2sql-out", "r.json")
    assert result.ret == 0
    trips = _trips(log)
    assert _assert_one_way(trips, 1) == 8
    data = json.loads((project / "r.json").read_text())
    assert data["summary"]["skipped"] == 8 - plans.calls > 0
    skipped = [i["nodeid"] for i in data["items"] if i["verdict"] == "skipped"]
    for (_pid, nodeid), events in trips.items():
        if nodeid in skipped:  # judged (nothing to score), recorded as skipped: still one way
            assert [e for e, _ in events].count("make_record>") == 1
