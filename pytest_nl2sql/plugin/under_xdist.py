"""What the plugin does under pytest-xdist: how suites are scheduled, and how records cross.

**Scheduling.** xdist's ``--dist loadscope`` and ``--dist loadfile`` with suites.

xdist groups ``loadscope`` by what is left of a node id once its last ``::`` part is cut, so
every item of a suite file (``evals/chinook.yaml::chinook_001[admin]``) would be one scope and
run on one worker. Under ``loadscope`` the plugin hands xdist a scheduler whose scope of an
nl2sql item is its case (``evals/chinook.yaml::chinook_001``: the roles of a case together,
the cases spread over the workers); other tests are scoped as xdist does. ``loadfile`` means
one file per worker, which for a suite is the whole suite: the plugin says so once, in the
header, and points at ``load``, ``worksteal`` or ``loadscope``.

**Crossing.** How an item's record crosses from an xdist worker to the controller: as one JSON string.

A worker attaches the item's record to its report (``report.nl2sql``) and xdist sends the
report's fields with execnet, whose serializer walks every nested dict, list and string of the
record in Python, on the worker and again on the controller (~85 and ~110 us a record on
Spider's records). The record is plain JSON data, so a worker sends it as one string
(``json.dumps``, in C, with sorted keys: the spool's line) and the controller reads it back with
``json.loads``: the same record, a tenth of the work; the controller's spool writes that text as
it came instead of writing the record out again. The same goes for the ``keywords`` of an nl2sql
item's setup, call and teardown reports (a dozen names each: the case's tags, role and outcome
are markers). Only
reports a worker sends are changed; a report serialized on the controller (pytest-reportlog)
keeps its fields as they are.

**Starting.** The controller reads the suites while its workers start.

xdist starts its workers in its own ``pytest_sessionstart`` (the last one). Reading a suite is
the slowest check the controller makes before anything runs (a cold YAML parse: ~0.3 s for
Spider dev's 972 cases); once done it fills the suite cache, which every worker reads. So on
the controller of an xdist run the checks of the options alone run first (a mistake there is
found before a worker starts), the workers are started, and the engine is built (its setup
checked, the LLMs' settings read: ~0.08 s on Spider, the project's YAML and the predictions
file) and the suites are read while the workers import and configure themselves
(:class:`WorkersStart`). The controller holds a lock (``precheck.lock`` in the run folder)
meanwhile; a worker waits for it before reading the suites, so it finds them in the cache
instead of parsing them again on a core the controller needs; a worker that finds every suite
in the cache already (a warm run) does not wait. An engine or a suite the
controller refuses (an engine's setup that fails, a missing API key, a plan missing in plans
mode, an unknown ``--nl2sql-roles`` or ``--nl2sql-cases`` name, a broken baseline) is a usage
error as before: the lock is given back, the workers, which make the same checks, end with it,
and the controller stops them (each is asked to shut down, then its gateway ends) before pytest
prints the error.

Where nothing the controller does before the workers start needs it, even its import of the
pipeline (the engine, the scorers, the reports: ~0.1 s of CPU, while the second core had
nothing to do) waits until xdist is starting the workers (:class:`DeferredStart`): on Spider
dev's 972 items, warm, ``-n 2`` took 0.97x the time it took before (docs/benchmarks.md).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.reporting.spool import record_text

__all__ = ["DIGESTS_KEY", "TEXT_ATTR", "DeferredStart", "RecordCrossing", "WorkersStart", "XdistScope", "started_workers", "suite_digests", "xdist_loaded"]


def xdist_loaded(config: pytest.Config) -> bool:
    """Is pytest-xdist's plugin registered in this run, by whatever name? Its entry point
    registers it as ``xdist``, ``-p xdist.plugin`` (with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``) as
    ``xdist.plugin``: asking for the module itself answers both (``-p no:xdist`` unloads it)."""
    module = sys.modules.get("xdist.plugin")
    return module is not None and config.pluginmanager.is_registered(module)


class XdistScope:
    def __init__(self, is_suite: Any) -> None:
        self.is_suite = is_suite  # path -> bool

    def _ours(self, nodeid: str) -> bool:
        path = nodeid.split("::")[0]
        return "::" in nodeid and nodeid.endswith("]") and self.is_suite(path)

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadscope":
            return None
        from xdist.scheduler import LoadScopeScheduling

        ours = self._ours

        class CaseScopeScheduling(LoadScopeScheduling):  # type: ignore[misc]
            def _split_scope(self, nodeid: str) -> str:
                if ours(nodeid):
                    return nodeid.rsplit("[", 1)[0]  # the case: its roles together
                return str(super()._split_scope(nodeid))

        return CaseScopeScheduling(config, log)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if getattr(config.option, "dist", None) == "loadfile" and getattr(config.option, "numprocesses", None):
            return [
                "nl2sql: --dist loadfile runs each suite file on one worker (a suite is one file); "
                "use --dist load, worksteal or loadscope (the plugin scopes loadscope by case) to spread a suite"
            ]
        return []


#: The report fields a worker sends the record and an nl2sql item's keywords under.
KEY = "nl2sql_json"
KEYWORDS_KEY = "nl2sql_keywords_json"
#: The attribute of a report on the controller holding the record's text as it crossed.
TEXT_ATTR = "nl2sql_text"


class RecordCrossing:
    """Registered by ``session.start`` on workers and on the controller of an xdist run;
    ``is_ours(nodeid)`` tells an nl2sql item's node id."""

    def __init__(self, is_ours: Any) -> None:
        self.is_ours = is_ours

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> Any:
        data = yield
        if hasattr(config, "workerinput") and isinstance(data, dict):
            if isinstance(data.get("nl2sql"), dict):
                data[KEY] = record_text(data.pop("nl2sql"))
            nodeid = data.get("nodeid")
            keywords = data.get("keywords")
            if isinstance(keywords, dict) and isinstance(nodeid, str) and "[" in nodeid and self.is_ours(nodeid):
                try:
                    data[KEYWORDS_KEY] = json.dumps(keywords, ensure_ascii=False)
                except (TypeError, ValueError):
                    pass  # not plain data: sent as it is
                else:
                    del data["keywords"]
        return data

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: Any) -> Any:
        text = keywords = None
        if isinstance(data, dict):
            text = data.pop(KEY, None)
            keywords = data.pop(KEYWORDS_KEY, None)
            if isinstance(keywords, str):
                data["keywords"] = json.loads(keywords)
        report = yield
        if isinstance(text, str) and report is not None:
            report.nl2sql = json.loads(text)
            setattr(report, TEXT_ATTR, text)  # the spool's line as it is (session: the controller records it)
        return report


#: The worker input naming the controller's lock (module doc, "Starting").
LOCK_KEY = "nl2sql_precheck_lock"
#: The worker input holding the suites' digests as the controller read them (``suite_digests``).
DIGESTS_KEY = "nl2sql_digests"
#: How long a worker waits for the controller's checks before it reads the suites itself.
WAIT_SECONDS = 600.0


class WorkersStart:
    """The controller's lock while it reads the suites and its workers start (module doc)."""

    def __init__(self, config: pytest.Config, folder: Path) -> None:
        from filelock import FileLock

        self.config = config
        self.path = folder / "precheck.lock"
        self._lock = FileLock(str(self.path))

    @staticmethod
    def wanted(config: pytest.Config) -> bool:
        """Is this the controller of an xdist run, with a suite cache for its workers to read?"""
        from pytest_nl2sql.suitefile.cachefolder import cache_dir

        return (
            not hasattr(config, "workerinput")
            and config.pluginmanager.getplugin("dsession") is not None
            and cache_dir() is not None
        )

    def __enter__(self) -> WorkersStart:
        self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def tell(self, node: Any) -> None:
        """``pytest_configure_node``: the worker learns where the lock is."""
        node.workerinput[LOCK_KEY] = str(self.path)

    def stop_workers(self) -> None:
        """After a usage error: the lock given back, each worker asked to shut down (one that
        has not reached its run loop does so when it gets there), then the gateways ended."""
        self._lock.release()
        dsession = self.config.pluginmanager.getplugin("dsession")
        manager = getattr(dsession, "nodemanager", None)
        if manager is None:
            return
        for node in list(getattr(dsession, "_active_nodes", None) or ()):
            try:
                node.shutdown()
            except Exception:  # noqa: BLE001 -- a worker already gone
                pass
        manager.teardown_nodes()


def suite_digests(paths: Any) -> dict[str, str]:
    """sha256 of each suite file's bytes, by resolved path: what the controller hands each worker
    as it starts (``plugin.collect.changed_since_controller``)."""
    out = {}
    for p in paths:
        try:
            out[str(Path(p).resolve())] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
        except OSError:
            continue
    return out


def started_workers(starting: WorkersStart, checks: Callable[[], None], after: Callable[[], None]) -> Generator[None, Any, Any]:
    """The controller's ``pytest_sessionstart`` wrapper (``yield from`` it) from the workers' start
    on: the lock held while xdist starts them and ``checks`` run, then ``after``; on a usage
    error (or anything) the workers are stopped before pytest prints it (module doc, "Starting")."""
    try:
        with starting:
            result = yield  # xdist starts the workers
            checks()
        after()
    except BaseException:
        starting.stop_workers()
        raise
    return result


class DeferredStart:
    """The controller of an xdist run imports the pipeline once its workers are starting.

    The workers are started in xdist's ``pytest_sessionstart``; importing the plugin's pipeline
    (the engine, the scorers, the reports: ~0.1 s) in ``pytest_configure`` held them back while
    the second core had nothing to do (module doc, "Starting"). So where nothing the controller
    does before that needs the pipeline -- suites named with ``--nl2sql-suite`` (their paths and
    digests are all a worker is handed), no cost ledger to share (mode full, ``--nl2sql-max-cost``),
    no upkeep (regenerate, seed, audit), the suite cache on, neither ``--dist each`` nor
    ``loadfile``, no pytest-testmon -- this stand-in is registered at configure (the options are
    read and checked there, as ever) and makes the session once xdist has started the workers,
    under the same lock; everything else is as :mod:`plugin.session` does it."""

    def __init__(self, config: pytest.Config, settings: Any, suites: list[Path], make_session: Callable[..., Any]) -> None:
        self.config = config
        self.settings = settings
        self.suites = suites  # resolved: the suites the session will collect
        self.make_session = make_session  # plugin.session.start (imported by the caller, on use)
        self.started = time.time()
        self.folder: Path | None = None  # the run folder (reporting.spool), handed to the session
        self.digests: dict[str, str] | None = None
        self.worker_count = 0
        self.header_asked = False
        self.session: Any = None
        self._starting: WorkersStart | None = None

    @classmethod
    def fits(cls, config: pytest.Config, settings: Any, make_session: Callable[..., Any]) -> DeferredStart | None:
        """The stand-in for this run, or None when the session must be made at configure;
        ``make_session(config, settings, handed=stand_in)`` makes it later."""
        from pytest_nl2sql.plugin.options import named_suites
        from pytest_nl2sql.suitefile.cachefolder import cache_dir

        option = config.option
        fits = (
            not hasattr(config, "workerinput")
            and xdist_loaded(config)
            and getattr(option, "dist", "no") not in ("no", "each", "loadfile")
            and bool(getattr(option, "tx", None))
            and not option.collectonly
            and bool(settings.suites)
            and all(p.is_file() for p in settings.suites)
            and settings.mode != "full"
            and settings.max_cost is None
            and not (settings.regenerate or settings.seed or settings.audit)
            and not getattr(option, "testmon", False)
            and cache_dir() is not None
        )
        if not fits:
            return None
        return cls(config, settings, sorted({p.resolve() for p in settings.suites} | set(named_suites(config))), make_session)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.session is not None:
            return  # a replacement worker: the session hands it what it needs
        self.worker_count += 1
        if self._starting is not None:
            self._starting.tell(node)
        if self.digests is None:
            self.digests = suite_digests(self.suites)
        node.workerinput[DIGESTS_KEY] = self.digests

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        self.header_asked = True  # the session says its lines once the workers start
        return []

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(self, session: pytest.Session) -> Any:
        from pytest_nl2sql.reporting.spool import make_run_folder

        self.folder = make_run_folder()
        self._starting = WorkersStart(self.config, self.folder)
        return (yield from started_workers(self._starting, self._make_session, lambda: self.session.after_start()))

    def _make_session(self) -> None:
        self.session = self.make_session(self.config, self.settings, handed=self)
        self.session.checks_after_spawn()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.session is None and self.folder is not None:  # the session never came: the folder is ours to remove
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)


def wait_for_controller(config: pytest.Config) -> None:
    """On a worker: wait until the controller has read the suites (module doc, "Starting")."""
    path = getattr(config, "workerinput", {}).get(LOCK_KEY)
    if not path:
        return
    from filelock import FileLock, Timeout

    try:
        with FileLock(path, timeout=WAIT_SECONDS):
            pass
    except Timeout:
        pass  # the controller is still busy: read the suites here
