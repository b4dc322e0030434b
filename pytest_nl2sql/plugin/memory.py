"""What a process holds during a run: the reports pytest keeps, and the heap the collector walks.

**Reports.** What the controller (and each xdist worker) keeps of each item's test reports once every
plugin has read them.

pytest's terminal reporter keeps every ``TestReport`` to the end of the run (its ``stats``:
setup, call and teardown of every item), and under xdist each report arrives as fresh
strings decoded by execnet: the node id three times, the location, and the item's keywords
(an nl2sql item's tags, role and outcome are markers, so a dozen names a report). At 40,000
items that is most of what the controller holds.

After ``pytest_runtest_logreport`` has run for every plugin (junitxml, the ``--lf`` cache,
pytest-html, the -v line and this plugin's record have read the whole report; on a worker,
xdist has sent it), the report of an nl2sql item drops its record (``report.nl2sql``) and is
replaced in the terminal reporter's ``stats`` by what the summary reads:

* a passed report becomes a :class:`SlimReport`: node id, location, outcome, when, duration,
  and -- only when it has them -- longrepr, captured sections (``-rP``), user properties and
  the xdist node (the ``[gw0]`` line);
* a failed report keeps everything but its keywords (the failure sections, ``-rf`` and
  ``--durations`` read longrepr, sections, location and duration, never keywords);
* a skipped report is kept whole (the folded ``SKIPPED`` lines read its keywords);
* a passed setup or teardown report without captured output is not kept at all unless
  ``--durations`` asks for it (nothing else reads it, and pytest's failure summary scans all
  of them once per failure).

The three reports of an item share one node id object and one location, and the node ids
xdist's workers send with their collections are interned, so each item's node id is held
once. Items of other plugins and of plain tests are left as they are.

**The heap.** The garbage collector and the heap a run builds before its first item.

Before the first item runs, a process holds what outlives the run: pytest and its plugins, the
engine, sqlglot, the suites and their cases, the collected items. CPython's collector walks
all of it again at each full collection, and a run of many cheap items allocates enough to
trigger one every few hundred items; pytest itself collects twice more at the end (its
unraisable-exception check). On Spider dev (972 items) those walks were a fifth of a serial
run (docs/benchmarks.md, issue 28 third pass).

So, when the run loop starts, the heap built so far is frozen (``gc.freeze``: moved to a
generation the collector skips; reference counting still frees everything as before, only
cyclic garbage made before that point waits for the end of the run), and it is unfrozen when
pytest's own clean-up is over, so an in-process run (pytester, ``pytest.main``) leaves the
collector as it found it. When something else in the process froze objects first, nothing is
done. Workers of pytest-xdist do the same in their own process.

``gc.get_referrers`` does not see frozen objects. The one caller known at the end of a run is
Hypothesis: its pytest plugin imports it in the terminal summary -- on the controller and, as
their sessions finish, on each xdist worker too -- and the import asks who refers to the PRNGs
of modules imported earlier (trio's), finds no one and warns (a worker's warning is relayed:
"1 warning" at the end of an ``-n`` run, the demo's Chinook suite for one). So when the Hypothesis plugin is active, Hypothesis
is imported before the heap is frozen, in every process (each would import it at the end anyway).

**Imports.** What a process imports during the run outlives it just as much: sqlglot and
SQLAlchemy are imported by the first item that needs them (a run whose verdicts are all
remembered never imports them), after the heap was frozen, and each full collection then walked
their hundred thousand objects again (about 0.1 s of a serial Spider dev run whose verdicts are
computed). So after an item that grew ``sys.modules``, the young generations are collected (the
item's own cyclic garbage) and the heap is frozen again.

**Young garbage.** Computing a guard or validator verdict builds sqlglot trees, whose nodes
point at their parents: reference cycles, freed only by the collector. At CPython's default
threshold (a collection of the youngest generation every 700 net allocations) a tree is still
being built at most collections, so it survives into the older generations and is walked again
there. While items run the threshold is 10,000 (cyclic garbage waits a little longer; ~0.06 s
of the 0.65 s a Spider dev run spends computing its 972 verdicts), and the value found is given
back with the heap (unless something else changed it meanwhile; a collector turned off is left off).

**At exit.** When the interpreter shuts down it collects the whole heap again while it frees the
modules: after a run of many items that walk was the largest single
cost after the items themselves (0.4 s of a 2.7 s serial Spider dev run, docs/benchmarks.md). The
cyclic garbage of the run is gone by then (pytest collects it at the end of the session, while
the heap is still frozen), so once a run has frozen the heap, an ``atexit`` handler, registered
once per process, freezes it again as the interpreter exits: the shutdown collections are
skipped, and everything is freed by reference counting as before. As with any object alive at
exit, a ``__del__`` of an object still in a reference cycle then is not called (Python never
promised it); ``-p no:nl2sql_heap`` turns this off together with the freezing.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import sys
from types import MappingProxyType
from typing import Any

import pytest
from _pytest.reports import TestReport

from pytest_nl2sql import collector
from pytest_nl2sql.plugin.under_xdist import TEXT_ATTR

__all__ = ["FrozenHeap", "ReportKeeper", "SlimReport"]

_NO_KEYWORDS: Any = MappingProxyType({})
try:  # pytest >= 9: a count of failed subtests per node id, an entry for every call report
    from _pytest.subtests import failed_subtests_key as _SUBTESTS
except ImportError:  # pragma: no cover -- pytest 8
    _SUBTESTS = None
_NONE: Any = ()


class SlimReport(TestReport):
    """A passed ``TestReport`` with only what the terminal summary reads (module doc): no
    keywords, no start or stop time, and sections and user properties only when it has them
    (the empty ones are one shared object)."""

    def __init__(self, report: TestReport, ident: Any, location: Any) -> None:  # not TestReport.__init__: nothing copied
        if "_id" in vars(report):  # pytest >= 9: the structured node id
            self._id = ident
        else:
            self.nodeid = ident
        self.location = location
        self.keywords = _NO_KEYWORDS
        self.outcome = sys.intern(report.outcome)
        self.longrepr = report.longrepr
        self.when = sys.intern(str(report.when))
        self.user_properties = report.user_properties or _NONE
        self.sections = report.sections or _NONE
        self.duration = report.duration
        self.start = self.stop = 0.0
        for name in ("node", "wasxfail"):
            if hasattr(report, name):
                setattr(self, name, getattr(report, name))


class ReportKeeper:
    """Slims each nl2sql item's reports after all plugins read them: on the controller, and on
    each xdist worker (whose terminal reporter keeps its reports too, after sending them)."""

    def __init__(self, config: pytest.Config, is_ours: Any) -> None:
        self.config = config
        self.is_ours = is_ours
        self._ids: dict[str, tuple[Any, Any]] = {}  # node id -> (its id, its location) until its teardown
        self._durations = getattr(config.option, "durations", None) is not None  # --durations=0 lists all

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        if isinstance(ids, list):  # before xdist's scheduler copies it: every worker's ids, one string each
            ids[:] = [sys.intern(n) if "[" in n and self.is_ours(n) else n for n in ids]

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        result = yield  # every plugin has read the whole report (on a worker: xdist has sent it)
        if type(report) is TestReport and "[" in report.nodeid and self.is_ours(report.nodeid):
            vars(report).pop("nl2sql", None)  # the item's record: in the spool (controller) or sent (worker)
            vars(report).pop(TEXT_ATTR, None)  # and its text as it crossed (plugin.under_xdist)
            self._slim(report)
        return result

    def _slim(self, report: TestReport) -> None:
        nodeid = sys.intern(report.nodeid)
        structured = "_id" in vars(report)
        shared = self._ids.get(nodeid)
        if shared is None:
            location = report.location
            if location is not None:
                location = (sys.intern(str(location[0])), location[1], location[2])
            shared = (report._id if structured else nodeid, location)
            if report.when != "teardown":
                self._ids[nodeid] = shared
        if report.when == "teardown":
            self._ids.pop(nodeid, None)
        ident, location = shared
        if structured and _SUBTESTS is not None and report.when == "call":
            counts = self.config.stash.get(_SUBTESTS, None)
            if counts is not None and counts.get(report._id, 1) == 0:
                del counts[report._id]  # no failed subtest (an nl2sql item has none): nothing to remember
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if structured and terminal is not None:
            seen = getattr(terminal, "_progress_nodeids_reported", None)
            if isinstance(seen, set) and report._id is not ident and report._id in seen:
                seen.discard(report._id)  # the same id, held once
                seen.add(ident)
        if self._unread(report):
            kept: TestReport | None = None
        elif report.passed and not hasattr(report, "wasxfail"):
            kept = SlimReport(report, ident, location)
        else:
            kept = report
            if structured:
                report._id = ident
            else:
                report.nodeid = ident
            report.location = location  # type: ignore[assignment]
            if report.failed:
                report.keywords = _NO_KEYWORDS
        if kept is not report and terminal is not None:
            for reports in getattr(terminal, "stats", {}).values():
                if reports and reports[-1] is report:
                    if kept is None:
                        reports.pop()
                    else:
                        reports[-1] = kept
                    break

    def _unread(self, report: TestReport) -> bool:
        """A passed setup or teardown report with no captured output: without ``--durations``
        nothing reads it at the end of the run, and pytest's failure summary scans every such
        report once per failure (``_get_teardown_reports``): it is not kept at all."""
        return (
            report.when != "call"
            and report.passed
            and not report.sections
            and not self._durations
            and not hasattr(report, "wasxfail")
        )


class FrozenHeap:
    """Registered by ``session.start``: freezes at the run loop, unfreezes at clean-up."""

    def __init__(self, config: pytest.Config) -> None:
        self.frozen = False
        self._modules = 0  # len(sys.modules) when last frozen
        self._threshold: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # (found, ours)
        # start() runs in a tryfirst pytest_configure, before pytest's unraisable-exception
        # plugin adds its clean-up; clean-ups run last-in first-out, so this one runs after its
        # gc.collect() and after pytest_unconfigure's.
        config.add_cleanup(self.unfreeze)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        if not self.frozen and gc.get_freeze_count() == 0:
            hypothesis_plugin = sys.modules.get("_hypothesis_pytestplugin")  # by entry point or -p, any name
            if hypothesis_plugin is not None and session.config.pluginmanager.is_registered(hypothesis_plugin):
                # its import allocates enough for full collections of the unfrozen heap
                with collector.paused(), contextlib.suppress(Exception):
                    import hypothesis  # noqa: F401  (module doc: its import reads gc.get_referrers)
            gc.freeze()
            self.frozen = True
            self._modules = len(sys.modules)
            before = gc.get_threshold()
            if before[0] and before[0] < YOUNG_THRESHOLD:  # 0: the collector is off; leave it
                self._threshold = (before, (YOUNG_THRESHOLD, *before[1:]))
                gc.set_threshold(*self._threshold[1])

    def pytest_runtest_logfinish(self) -> None:
        """After an item that imported modules (sqlglot, SQLAlchemy: loaded on the first item
        that needs them), freeze again: they outlive the run too (module doc, "Imports")."""
        if self.frozen and len(sys.modules) != self._modules:
            self._modules = len(sys.modules)
            gc.collect(1)  # the item's own cyclic garbage (young): not frozen with the modules
            gc.freeze()

    def unfreeze(self) -> None:
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
            if self._threshold is not None:
                before, ours = self._threshold
                self._threshold = None
                if gc.get_threshold() == ours:  # nobody set it since: give back what we found
                    gc.set_threshold(*before)
            _freeze_at_exit()


#: The youngest generation's threshold while items run (CPython's default is 700; module doc,
#: "Young garbage").
YOUNG_THRESHOLD = 10_000

_AT_EXIT: list[bool] = []


def _freeze_at_exit() -> None:
    """Once per process: freeze the heap again when the interpreter exits (module doc, "At exit")."""
    if not _AT_EXIT:
        _AT_EXIT.append(True)
        atexit.register(gc.freeze)
