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
instead of parsing them again on a core the controller needs. An engine or a suite the
controller refuses (an engine's setup that fails, a missing API key, a plan missing in plans
mode, an unknown ``--nl2sql-roles`` or ``--nl2sql-cases`` name, a broken baseline) is a usage
error as before: the lock is given back, the workers, which make the same checks, end with it,
and the controller stops them (each is asked to shut down, then its gateway ends) before pytest
prints the error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.reporting.spool import record_text

__all__ = ["TEXT_ATTR", "RecordCrossing", "WorkersStart", "XdistScope", "xdist_loaded"]


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
        from pytest_nl2sql.suitefile.cache import cache_dir

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
