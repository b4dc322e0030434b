"""A serial run checks its batches on two cores (engine/forkhelper.py, ``--nl2sql-second-core``):
every item checked once, the same answers, nothing left behind when the helper fails."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest

from pytest_nl2sql.datasources import guard
from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.engine import forkhelper, validator
from pytest_nl2sql.engine.replay import Prediction, ReplayEngine

from .conftest import copy_shop
from .test_prepare_cases import PREDICTIONS

needs_two_cores = pytest.mark.skipif(not forkhelper.available(), reason="a forked helper needs Linux and two usable CPUs")


def _running(pid: int) -> bool:
    """Whether ``pid`` is a child of this process that has not been reaped (gone: reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class _Work:
    """Item ``i`` computes ``{str(i): i * i}`` into ``new``; ``done`` lists the items done here."""

    def __init__(self, parent: int, child: str = "works") -> None:
        self.parent, self.child = parent, child
        self.new: dict[str, int] = {}
        self.done: list[int] = []
        self.given: dict[str, int] = {}

    def work(self, i: int) -> None:
        if os.getpid() != self.parent:
            if self.child == "dies":
                os._exit(3)
            if self.child == "hangs":
                time.sleep(3600)
        else:
            self.done.append(i)
        _spin(0.001)
        self.new[str(i)] = i * i

    def take(self) -> dict[str, int]:
        new, self.new = self.new, {}
        return new

    def give(self, payload: dict[str, int]) -> None:
        self.given.update(payload)


@needs_two_cores
def test_the_helper_works_ahead_and_hands_every_item_over_in_order() -> None:
    w = _Work(os.getpid())
    helper = forkhelper.Helper.start(400, w.work, w.take)
    assert helper is not None and _running(helper.pid)
    for i in range(400):
        assert helper.wait_for(i, w.give)
        assert str(i) in w.given  # this item's results have come (and every one before it)
    assert w.given == {str(i): i * i for i in range(400)} and w.done == []  # all done there, none here
    helper.stop()
    assert not _running(helper.pid)  # the helper is gone (killed and reaped)


@needs_two_cores
def test_a_helper_is_read_whatever_the_number_of_its_pipe() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1200:
        pytest.skip("this process may not open 1,200 files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # a busy process: sockets, databases
    try:
        w = _Work(os.getpid())
        helper = forkhelper.Helper.start(32, w.work, w.take)
        assert helper is not None and helper._fd >= 1024  # beyond select()'s reach
        assert all(helper.wait_for(i, w.give) for i in range(32))
        helper.stop()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert w.given == {str(i): i * i for i in range(32)}


@needs_two_cores
@pytest.mark.parametrize("child", ["dies", "hangs"])
def test_a_helper_that_dies_or_hangs_is_stopped_and_nothing_stays_behind(
    child: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forkhelper, "STALL_S", 0.5)
    w = _Work(os.getpid(), child)
    helper = forkhelper.Helper.start(64, w.work, w.take)
    assert helper is not None
    assert helper.wait_for(0, w.give) is False  # the item is this process's to check
    assert helper.ended and w.given == {}
    assert helper.wait_for(1, w.give) is False  # and so is every later one, without waiting
    assert not _running(helper.pid)


def test_without_two_cores_or_with_few_items_nothing_is_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkhelper, "available", lambda: False)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    w = _Work(os.getpid())
    assert forkhelper.Helper.start(64, w.work, w.take) is None
    monkeypatch.setattr(forkhelper, "available", lambda: True)
    assert forkhelper.Helper.start(forkhelper.MIN_ITEMS - 1, w.work, w.take) is None  # too few to fork for
    assert w.done == []


#: 120 distinct predictions over the shop: queries that run, unknown columns, a column the
#: clerk may not read, a write the guard refuses, a string fallback.
def _predictions() -> list[Prediction]:
    kinds = [
        "SELECT name FROM customer WHERE id = {i}",
        "SELECT total FROM orders WHERE id > {i}",
        "SELECT nope_{i} FROM orders",
        "SELECT email FROM customer WHERE id = {i}",
        "DELETE FROM orders WHERE id = {i}",
        'SELECT name FROM customer WHERE city = "Paris {i}"',
    ]
    return [
        Prediction(id=f"q{i:03d}", role=role, sql=kinds[i % len(kinds)].format(i=i))
        for i in range(60) for role in ("admin", "clerk")
    ]


def _answers(engine: ReplayEngine, pairs: list) -> list[dict]:
    return [{k: v for k, v in attrs.asdict(engine.answer_case(c, r)).items() if k != "latency_s"} for c, r in pairs]


PAIRS = [(SimpleNamespace(id=f"q{i:03d}", datasources=["shop"]), role) for i in range(60) for role in ("admin", "clerk")]


def _run(project, store: Path, second: bool, monkeypatch: pytest.MonkeyPatch, pairs: list = PAIRS) -> tuple[list[dict], int, int, int]:
    """The answers to PAIRS after ``prepare_cases`` with the verdict store in ``store``, the
    verdicts this process computed ahead and while answering, and the helper's entries merged."""
    merged: list[int] = []
    merge = STORE.merge
    monkeypatch.setattr(STORE, "merge", lambda entries: merged.append(len(entries)) or merge(entries))
    computed: list[str] = []  # the verdicts computed in this process (not read from the store)
    check, validate = guard._check_statement, validator._validate_sql
    monkeypatch.setattr(guard, "_check_statement", lambda *a: computed.append("guard") or check(*a))
    monkeypatch.setattr(validator, "_validate_sql", lambda *a: computed.append("validator") or validate(*a))
    guard.VERDICTS.clear()
    validator.VERDICTS.clear()
    STORE.enable(store)
    try:
        engine = ReplayEngine(_predictions(), project)
        engine.second_core = second
        engine.prepare_cases(pairs)
        ahead = len(computed)
        answers = _answers(engine, pairs)
        engine.close()
        STORE.flush()  # remembered for a later run with the same folder
    finally:
        STORE.enable(None)
        monkeypatch.undo()
    return answers, ahead, len(computed) - ahead, sum(merged)


@needs_two_cores
def test_answers_checked_on_two_cores_are_the_one_core_answers(project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, ahead, answering, _ = _run(project, tmp_path / "one", False, monkeypatch)
    assert ahead > 0 and answering == 0  # checked ahead, here: the answers read the verdicts
    two, ahead, answering, merged = _run(project, tmp_path / "two", True, monkeypatch)
    assert two == one
    assert ahead == answering == 0 and merged > 0  # all checked by the helper, none here
    assert {a["status"] for a in two} == {"ok", "refused", "error"}


@needs_two_cores
def test_a_helper_is_not_forked_for_a_warm_run_and_reads_what_earlier_runs_remembered(
    project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part, *_ = _run(project, tmp_path / "store", False, monkeypatch, PAIRS[:30])  # a quarter remembered
    starts: list[int] = []
    start = forkhelper.Helper.start.__func__
    monkeypatch.setattr(forkhelper.Helper, "start", classmethod(lambda cls, n, *a: starts.append(n) or start(cls, n, *a)))
    both, ahead, answering, merged = _run(project, tmp_path / "store", True, monkeypatch)
    assert starts == [len(PAIRS)] and both[:30] == part
    assert ahead == answering == 0 and merged > 0  # the new verdicts from the helper, the rest read from the store
    monkeypatch.setattr(forkhelper.Helper, "start", classmethod(lambda cls, n, *a: starts.append(n) or start(cls, n, *a)))
    warm, ahead, answering, merged = _run(project, tmp_path / "store", True, monkeypatch)
    assert starts == [len(PAIRS)]  # every verdict remembered: checked here, no fork
    assert warm == both and ahead == answering == merged == 0


@needs_two_cores
def test_a_stuck_helper_costs_a_wait_not_an_answer(project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, *_ = _run(project, tmp_path / "one", False, monkeypatch)
    checked = ReplayEngine._checked

    def stuck(self, *args):
        if os.getpid() != self._pid:  # in the helper
            time.sleep(3600)
        return checked(self, *args)

    monkeypatch.setattr(ReplayEngine, "_checked", stuck)
    monkeypatch.setattr(forkhelper, "STALL_S", 0.5)
    engine = ReplayEngine(_predictions(), project)
    engine.second_core = True
    STORE.enable(tmp_path / "stuck")
    try:
        engine.prepare_cases(PAIRS)
        helper = engine._helper
        assert helper is not None and _running(helper.pid)
        assert _answers(engine, PAIRS) == one  # the first answer waited 0.5 s, then all were checked here
        assert engine._helper is None and not _running(helper.pid)
    finally:
        STORE.enable(None)
        engine.close()


def test_a_forked_copy_of_the_engine_opens_no_database(project) -> None:
    engine = ReplayEngine(_predictions(), project)
    engine._pid = -1  # as in a forked helper: another process made the engine
    with pytest.raises(RuntimeError, match="read by the process that made the engine"):
        engine._schema("shop")
    engine._pid = os.getpid()
    assert "customer" in engine._schema("shop")
    engine._pid = -1
    assert "customer" in engine._schema("shop")  # read before the fork: the helper may use it


SPLITS = """
from pytest_nl2sql.engine import forkhelper

_start = forkhelper.Helper.start.__func__

def start(cls, count, work, take):
    with open("splits.txt", "a") as fh:
        fh.write(f"{count}\\n")
    return _start(cls, count, work, take)

forkhelper.Helper.start = classmethod(start)
forkhelper.MIN_ITEMS = 2
"""


def test_a_serial_run_checks_on_two_cores_and_reports_the_same(
    pytester: pytest.Pytester, shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_shop(shop, pytester.path, PREDICTIONS)
    pytester.makeconftest(SPLITS)
    reports, splits = {}, {}
    for name, how in {"off": ["--nl2sql-second-core", "off"], "auto": [], "xdist": ["-n", "2"]}.items():
        monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / name))  # empty: every verdict computed
        result = pytester.runpytest_subprocess(
            "--nl2sql-suite", "evals/shop.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
            "-p", "no:cacheprovider", "-p", "no:randomly", "--nl2sql-out", f"{name}.json", *how,
        )
        result.assert_outcomes(passed=4, failed=1)  # the DELETE is refused by the guard: an error
        items = json.loads((pytester.path / f"{name}.json").read_text())["items"]
        reports[name] = sorted(json.dumps({k: v for k, v in i.items() if k != "latency_s"}, sort_keys=True) for i in items)
        done = pytester.path / "splits.txt"
        splits[name] = done.read_text().split() if done.exists() else []
        done.unlink(missing_ok=True)
    assert reports["auto"] == reports["off"] == reports["xdist"]
    # the default: the serial run's batch went through the helper; off, and an xdist worker
    # (its partner has the other core): one core
    assert splits == {"off": [], "auto": ["5"] if forkhelper.available() else [], "xdist": []}


def test_a_wrong_second_core_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnl2sql_second_core = sometimes\n")
    result = pytester.runpytest_subprocess("--nl2sql-suite", "nowhere.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nl2sql-second-core: 'sometimes' is not one of auto, off*"])
    result = pytester.runpytest_subprocess("--nl2sql-second-core", "maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nl2sql-second-core: invalid choice: 'maybe'*"])
