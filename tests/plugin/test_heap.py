"""The heap built before the first item is frozen for the garbage collector during the run and
given back afterwards (plugin/memory.py, issue 28)."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest


def probe(value: str, then: str = "") -> str:
    """A conftest that writes a line "<pid> <value>" to probe.txt as each item runs (in the
    process that runs it: a worker under xdist), then runs ``then`` (indented code)."""
    return f"""
import gc
import os
import sys

def pytest_runtest_call(item):
    with open("probe.txt", "a") as fh:
        fh.write(f"{{os.getpid()}} {{{value}}}\\n")
{then}"""


def probed(pytester: pytest.Pytester) -> list[list[str]]:
    return [line.split() for line in (pytester.path / "probe.txt").read_text().splitlines()]


COUNTS = probe("gc.get_freeze_count()")


def test_the_heap_is_frozen_while_items_run_and_given_back_after(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(COUNTS)
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=7)
    during = [int(line[1]) for line in probed(pytester)]
    assert len(during) == 7 and all(n > 1000 for n in during), during  # pytest, the engine, the suite: frozen
    assert gc.get_freeze_count() == before == 0  # an in-process run leaves the collector as it found it


def test_a_process_that_froze_first_is_left_alone(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(COUNTS)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q")
        result.assert_outcomes(passed=7)
        # frozen objects freed by reference counting leave the count: it only goes down
        after = gc.get_freeze_count()
        assert frozen * 0.9 < after <= frozen  # not unfrozen by the run
        during = [int(line[1]) for line in probed(pytester)]
        assert len(during) == 7 and all(after <= n <= frozen for n in during), (frozen, during)  # nothing more frozen
    finally:
        gc.unfreeze()


def test_workers_freeze_their_own_heap(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(COUNTS)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q", "-n", "2")
    result.assert_outcomes(passed=7)
    lines = probed(pytester)
    assert len(lines) == 7 and len({pid for pid, _ in lines}) == 2, lines  # two worker processes ran items
    assert all(int(n) > 1000 for _, n in lines), lines


def test_no_warning_from_hypothesis_on_workers_either(pytester: pytest.Pytester, project: Path, demo_dir: Path) -> None:
    """Hypothesis, imported at the end of a session (its plugin's terminal summary: on every
    xdist worker too) while the heap is frozen, asks ``gc.get_referrers`` about trio's PRNG,
    sees none and warns; a worker's warning reached the controller as "1 warning" at the end of
    an ``-n`` run (of the Chinook suite, not of the mini one) in an environment with both installed."""
    pytest.importorskip("hypothesis")
    pytest.importorskip("trio")
    shutil.copy(demo_dir / "evals" / "chinook.yaml", project / "evals" / "chinook.yaml")  # enough items to show it
    for workers in ("0", "2"):
        result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/chinook.yaml", "-p", "no:randomly", "-n", workers, "-q")
        assert result.ret == 0, result.stdout.str()
        text = result.stdout.str()
        assert "HypothesisWarning" not in text and "warning" not in result.outlines[-1], text


def test_the_freezing_can_be_turned_off(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(COUNTS)
    result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-p", "no:nl2sql_heap", "-q")
    result.assert_outcomes(passed=7)
    during = [int(line[1]) for line in probed(pytester)]
    assert during == [0] * 7


AT_EXIT = """
import atexit, gc

def _count():  # registered at import, before the plugin's handler: runs after it
    with open("at_exit.txt", "w") as fh:
        fh.write(str(gc.get_freeze_count()))

atexit.register(_count)
"""


@pytest.mark.parametrize("heap", ["on", "off"])
def test_the_heap_is_frozen_again_as_the_process_exits(pytester: pytest.Pytester, project: Path, heap: str) -> None:
    # the interpreter's shutdown collections would walk the whole heap once more (module doc)
    pytester.makeconftest(AT_EXIT)
    off = ["-p", "no:nl2sql_heap"] if heap == "off" else []
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q", *off)
    result.assert_outcomes(passed=7)
    at_exit = int((pytester.path / "at_exit.txt").read_text())
    assert at_exit > 1000 if heap == "on" else at_exit == 0, at_exit


IMPORTS = probe("gc.get_freeze_count()", """\
    if len(open("probe.txt").read().splitlines()) == 2:  # the second item imports a module, as the first miss imports sqlglot
        sys.path.insert(0, os.getcwd())
        import heavy_module
""")


def test_modules_an_item_imports_are_frozen_after_it(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(IMPORTS)
    (pytester.path / "heavy_module.py").write_text("DATA = [[i] for i in range(50_000)]\n")
    result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=7)
    during = [int(line[1]) for line in probed(pytester)]
    assert len(during) == 7
    # the module's 50,000 lists, imported during the second item, are frozen before the third
    assert during[2] >= during[1] + 50_000, during
    assert gc.get_freeze_count() == 0  # and given back with the rest at the end


THRESHOLD = probe("gc.get_threshold()[0]")


def test_young_garbage_is_collected_less_often_while_items_run(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(THRESHOLD)
    before = gc.get_threshold()
    result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=7)
    during = {int(line[1]) for line in probed(pytester)}
    assert during == {10_000}
    assert gc.get_threshold() == before  # given back


def test_a_collector_turned_off_stays_off(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(THRESHOLD)
    before = gc.get_threshold()
    gc.set_threshold(0, before[1], before[2])
    try:
        result = pytester.runpytest_inprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "-q")
        result.assert_outcomes(passed=7)
        during = {int(line[1]) for line in probed(pytester)}
        assert during == {0}
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


#: The collector as eager as it can be (a collection every 10 allocations, a full one every
#: 40): each collection started while an nl2sql item is made is logged.
EAGER_COLLECTOR = """
import gc

MAKING = []

def _log(phase, info):
    if phase == "start" and MAKING:
        with open("collections.txt", "a") as fh:
            fh.write(f"{info['generation']}\\n")

def pytest_configure(config):
    from pytest_nl2sql.plugin.collect import CaseItem

    made = CaseItem.__init__

    def __init__(self, *args, **kwargs):
        MAKING.append(1)
        try:
            made(self, *args, **kwargs)
        finally:
            MAKING.pop()

    CaseItem.__init__ = __init__
    gc.set_threshold(10, 2, 2)
    gc.callbacks.append(_log)
"""


def test_making_the_items_triggers_no_garbage_collection(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(EAGER_COLLECTOR)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:randomly", "--co", "-q")
    assert result.ret == 0
    assert "7 tests collected" in "\n".join(result.outlines)
    # the items outlive the run: a collection while they are made (even a full one) would free nothing
    assert not (project / "collections.txt").exists(), (project / "collections.txt").read_text()
