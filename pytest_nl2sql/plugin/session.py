"""The session plugin object: collection wiring, records, baseline verdicts, the run report.

Under xdist, each worker runs items and attaches a plain-dict record to each report; the
controller receives the reports, keeps the records and alone writes files (the JSON report,
an updated baseline) -- once, in ``pytest_sessionfinish``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.config.model import project_above
from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.errors import Nl2sqlError, SuiteError
from pytest_nl2sql.plugin.accounting import billed_after_stop, register_full_run
from pytest_nl2sql.plugin.collect import (
    RUN_KEY,
    CaseFailure,
    CaseItem,
    CaseSuiteError,
    SuiteFile,
    case_selected,
    select_roles,
    select_shard,
)
from pytest_nl2sql.plugin.endings import (
    SigtermAsInterrupt,
    guard_junit,
    junit_clarification,
    junit_says_incomplete,
    missing_items,
    remove_stale,
    report_never_scheduled,
    rest_why,
)
from pytest_nl2sql.plugin.engine_factory import DefaultEngineFactory
from pytest_nl2sql.plugin.ledger import CostLedger
from pytest_nl2sql.plugin.options import join_args, named_suites, read_settings, take_suites
from pytest_nl2sql.plugin.run import Nl2sqlRun
from pytest_nl2sql.plugin.under_xdist import (
    DIGESTS_KEY,
    TEXT_ATTR,
    RecordCrossing,
    WorkersStart,
    XdistScope,
    started_workers,
    suite_digests,
    wait_for_controller,
    xdist_loaded,
)
from pytest_nl2sql.reporting.completeness import incomplete_line
from pytest_nl2sql.reporting.finish import finish_run
from pytest_nl2sql.reporting.gate import (
    apply_verdict,
    failed_scorers,
    stale_entries,
    stale_lines,
    update_baselines,
)
from pytest_nl2sql.reporting.outputs import OUTPUT_ERROR, SERIES_BREAK, write_output
from pytest_nl2sql.reporting.report import (
    RunReport,
    make_record,
    record_reason,
    run_meta,
    short_repr,
)
from pytest_nl2sql.reporting.spool import RecordSpool, make_run_folder
from pytest_nl2sql.scoring.clarification import ClarificationScorer
from pytest_nl2sql.scoring.faithfulness import FaithfulnessScorer
from pytest_nl2sql.scoring.scorers import BuiltinScorers
from pytest_nl2sql.suitefile.cache import cache_dir, cache_warning
from pytest_nl2sql.suitefile.loader import in_cache, load_suite
from pytest_nl2sql.suitefile.model import Status

__all__ = ["Nl2sqlSession", "start"]


def start(config: pytest.Config, settings: Any = None, handed: Any = None) -> Nl2sqlSession:
    """Register the plugin objects of a run that uses the plugin (from ``pytest_configure``; on
    an xdist controller maybe once its workers are starting: ``handed``, a
    ``plugin.under_xdist.DeferredStart``)."""
    run = Nl2sqlRun(config, settings if settings is not None else read_settings(config))
    config.stash[RUN_KEY] = run
    folder = cache_dir()
    STORE.enable(folder)  # verdicts remembered across runs, beside the suite cache
    if not _is_worker(config):
        unusable = cache_warning(folder)  # said once, by the controller
        if unusable is not None:
            config.issue_config_time_warning(pytest.PytestConfigWarning(unusable), stacklevel=2)
    config.pluginmanager.register(BuiltinScorers(), "nl2sql_scorers")
    config.pluginmanager.register(ClarificationScorer(), "nl2sql_clarification")
    if not config.pluginmanager.is_blocked("nl2sql_scorers"):  # -p no:nl2sql_scorers: every built-in scorer goes
        config.pluginmanager.register(FaithfulnessScorer(), "nl2sql_faithfulness")
    config.pluginmanager.register(DefaultEngineFactory(), "nl2sql_default_engine")
    session = Nl2sqlSession(config, run)
    if handed is not None:
        session.take_over(handed)
    config.pluginmanager.register(session, "nl2sql_session")
    from pytest_nl2sql.plugin.memory import FrozenHeap, ReportKeeper

    config.pluginmanager.register(FrozenHeap(config), "nl2sql_heap")  # the collector skips what outlives the run

    config.pluginmanager.register(ReportKeeper(config, session._is_ours), "nl2sql_kept")  # what pytest keeps of our reports
    if xdist_loaded(config):  # by its entry point or by -p xdist.plugin
        config.pluginmanager.register(RecordCrossing(session._is_ours), "nl2sql_crossing")  # a record crosses as one JSON string

        config.pluginmanager.register(XdistScope(lambda p: session.is_suite_path(Path(config.rootpath) / p)), "nl2sql_xdist_scope")
    return session


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class Nl2sqlSession:
    def __init__(self, config: pytest.Config, run: Nl2sqlRun) -> None:
        self.config = config
        self.run = run
        self.started = time.time()
        self._folder: Path | None = None  # the run folder (reporting.spool): the spool, the ledger
        self._spool: RecordSpool | None = None
        self.crashed: list[str] = []
        self.collected: list[str] = []  # the nl2sql items collected (their node ids)
        self.missing: list[dict[str, str]] = []  # items without a verdict, with why (plugin.endings)
        self.sigterm = SigtermAsInterrupt()
        self._stale_removed = False
        self._digests: dict[str, str] | None = None  # suite file digests handed to xdist workers
        self.reruns: dict[str, int] = {}  # pytest-rerunfailures: reruns per item
        self.output_errors: list[str] = []  # outputs that could not be written (reporting.finish)
        self.workers_down: list[str] = []
        self.fixed: list[str] = []
        self.ran: list[tuple[Path, str, bool, str, str]] = []
        self.worker_count = 0
        self._starting: WorkersStart | None = None  # the controller's lock while its workers start
        self._header_after_start = False  # the header's suite lines wait for the workers' start
        self.regenerated: list[str] = []
        self.upkeep_lines: list[str] = []
        self.upkeep_status: dict[str, int] = {}
        self._suite_paths: set[Path] = set()
        self._ours_by_path: dict[str, bool] = {}
        self._owns_ledger = False
        self._setup()

    # -- configuration ----------------------------------------------------------------
    def _setup(self) -> None:
        config, run = self.config, self.run
        explicit = bool(run.settings.explicit or run.settings.suites)
        # an nl2sql option was given: run those suites (default: what evals.yaml names), alone
        # unless test paths were given too
        named = named_suites(config)  # suite files (or node ids in them) named on the command line
        suites = run.default_suites() if explicit and (run.settings.suites or not named) else ()
        if explicit and not suites and not named and not run.settings.seed:
            _no_suites(run)
        known = {Path(p).resolve() for p in suites} | set(named)
        take_suites(config, suites)
        # in a project folder (nl2sql.yaml in the rootdir), the suites evals.yaml names are
        # collected wherever pytest's own walk meets them, beside the project's ordinary tests
        if not explicit and (Path(str(config.rootpath)) / "nl2sql.yaml").is_file():
            project_suites = [Path(p).resolve() for p in run.default_suites()]
            known.update(project_suites)
            if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
                join_args(config, project_suites)
        self._suite_paths = known
        self._ours_by_path.clear()
        if run.settings.mode == "full" or run.settings.max_cost is not None:
            if _is_worker(config):
                path = config.workerinput.get("nl2sql_ledger")  # type: ignore[attr-defined]
                if path:
                    run.ledger = CostLedger(path, run.settings.max_cost)
            else:
                run.ledger = CostLedger.create(run.settings.max_cost, self.folder)
                self._owns_ledger = True
        if run.settings.llms and run.settings.max_cost is not None:  # each named LLM config: an equal share
            share = run.settings.max_cost / len(run.settings.llms)
            if _is_worker(config):
                paths = config.workerinput.get("nl2sql_llm_ledgers") or {}  # type: ignore[attr-defined]
                run.llm_ledgers = {name: CostLedger(path, share) for name, path in paths.items()}
            else:
                run.llm_ledgers = {name: CostLedger.create(share) for name in run.settings.llms}
        register_full_run(config, run, lambda: self.records)  # progress line, --nl2sql-estimate, --nl2sql-save-predictions
        if getattr(config.option, "testmon", False) and not _is_worker(config):
            testmon_environment(config, run, self._suite_paths)

    @property
    def folder(self) -> Path:
        """The run folder (made on first use; removed at the end of the run)."""
        if self._folder is None:
            self._folder = make_run_folder()
        return self._folder

    @property
    def records(self) -> RecordSpool | dict[str, Any]:
        """The records of the run so far, by node id (on disk: reporting.spool)."""
        return self._spool if self._spool is not None else {}

    def _record(self, record: dict[str, Any], text: str | None = None) -> None:
        if self._spool is None:
            self._spool = RecordSpool(self.folder)
        self._spool.add(record, text)

    def is_suite_path(self, path: Path) -> bool:
        return Path(path).resolve() in self._suite_paths

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        self.worker_count += 1
        if self._starting is not None:
            self._starting.tell(node)
        if self._digests is None:  # once: a replacement worker checks against the same digests
            self._digests = suite_digests(sorted(self._suite_paths))
        node.workerinput[DIGESTS_KEY] = self._digests
        if self.run.ledger is not None:
            node.workerinput["nl2sql_ledger"] = str(self.run.ledger.path)
        if self.run.llm_ledgers:
            node.workerinput["nl2sql_llm_ledgers"] = {name: str(ledger.path) for name, ledger in self.run.llm_ledgers.items()}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            name = node.gateway.id if hasattr(node, "gateway") else str(node)
            self.workers_down.append(f"{name}: {error}")

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(self, session: pytest.Session) -> Any:
        suites = sorted(self._suite_paths)
        if not WorkersStart.wanted(self.config):  # serial, or a worker
            if _is_worker(self.config) and not all(in_cache(p) for p in suites):
                wait_for_controller(self.config)  # a suite the controller is still reading into the cache
            self.run.precheck(suites)
            self._controller_start()
            return (yield)
        self.run.precheck_options()  # before a worker starts
        self._starting = WorkersStart(self.config, self.folder)
        return (yield from started_workers(self._starting, self.checks_after_spawn, self.after_start))

    def take_over(self, deferred: Any) -> None:
        """What the controller's stand-in did before this session was made, once xdist was
        starting the workers (``plugin.under_xdist.DeferredStart``)."""
        self.started = deferred.started
        self._folder = deferred.folder  # the lock is there; removed with the run folder
        self._digests = deferred.digests
        self.worker_count = deferred.worker_count
        self._header_after_start = deferred.header_asked

    def checks_after_spawn(self) -> None:
        """The controller's checks once xdist is starting the workers, under the lock they wait for."""
        suites = sorted(self._suite_paths)
        self.run.precheck_engine(suites)
        self.run.precheck_suites(suites)
        if not self.config.option.collectonly:
            self.run.start_provenance(suites)

    def after_start(self) -> None:
        self._starting = None
        terminal = self.config.pluginmanager.getplugin("terminalreporter")
        if self._header_after_start and terminal is not None:
            for line in self._header_lines():
                terminal.write_line(line)
        self._controller_start()

    def _controller_start(self) -> None:
        if not _is_worker(self.config):
            self.sigterm.install()
            guard_junit(self.config, self.output_errors)
            self._upkeep()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not _is_worker(self.config) and session.items:
            self.collected = [i.nodeid for i in session.items if isinstance(i, CaseItem)]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        if not self.collected:
            self.collected = [n for n in ids if "[" in n and self._is_ours(n)]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        try:
            result = yield
            if not _is_worker(self.config) and self.workers_down:
                why = rest_why(session, 0, True)
                report_never_scheduled(self.config, missing_items(self.collected, self.records, self.crashed, why))
        finally:
            if not _is_worker(self.config) and self.collected:
                lost = missing_items(self.collected, self.records, self.crashed, "")
                junit_says_incomplete(self.config, len(lost))
                junit_clarification(self.config, self._spool.views() if self._spool is not None else [])
        return result

    def _upkeep(self) -> None:
        """--nl2sql-seed and --nl2sql-audit: once, in the controller, before anything runs."""
        settings = self.run.settings
        if not (settings.seed or settings.audit):
            return
        project = self.run.project
        if project is None:
            raise pytest.UsageError(
                "--nl2sql-seed and --nl2sql-audit need nl2sql.yaml (its datasources): pass --nl2sql-config PATH "
                "or make one with `pytest-nl2sql init DIR`"
            )
        if settings.seed:  # bad seed options stop the run before anything runs
            from pytest_nl2sql.upkeep.drafts import DraftTargetRefused, check_draft_target

            if settings.seed not in project.datasources:
                raise pytest.UsageError(
                    f"--nl2sql-seed: unknown datasource {settings.seed!r} (known: {', '.join(sorted(project.datasources))})"
                )
            try:
                check_draft_target(settings.seed_out, config=project)
            except DraftTargetRefused as exc:
                raise pytest.UsageError(str(exc)) from None
        if settings.audit:
            from pytest_nl2sql.datasources import DatasourceRegistry
            from pytest_nl2sql.upkeep.audit import run_audit

            with DatasourceRegistry.from_config(project) as registry:
                _check_logins(registry)

            paths = sorted(self._suite_paths)
            self.upkeep_status["audit"] = run_audit(
                paths, project, fail_on_warnings=settings.audit_warnings, echo=self.upkeep_lines.append,
                mutants=settings.audit_mutants,
            )

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if self.is_suite_path(file_path):
            return SuiteFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self.run.settings.shard is not None:
            select_shard(config, items, self.run.settings.shard)  # in every worker alike
        if _is_worker(config):
            return
        if self.run.settings.regenerate:
            self.regenerate_selected([i for i in items if isinstance(i, CaseItem)])
        if self.run.settings.seed:
            self.seed_drafts()

    def seed_drafts(self) -> None:
        """--nl2sql-seed: write the drafts file, after collection, in this one process."""
        from pytest_nl2sql.upkeep.seed import run_seed

        settings = self.run.settings
        self.upkeep_status["seed"] = run_seed(
            settings.seed, settings.seed_out, self.run.project, count=settings.seed_count, echo=self.upkeep_lines.append
        )

    def regenerate_selected(self, items: list[CaseItem]) -> None:
        """Rewrite rows of the selected cases (after collection, in this one process), then
        point the items at the fresh cases so they run against the new rows."""
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.regenerate import PackagedSuiteError, regenerate

        project = self.run.project
        if project is None:
            raise pytest.UsageError(
                "--nl2sql-regenerate needs nl2sql.yaml (its datasources run the SQL): pass --nl2sql-config PATH "
                "or make one with `pytest-nl2sql init DIR`"
            )
        registry = DatasourceRegistry.from_config(project)
        _check_logins(registry)
        by_suite: dict[Path, list[CaseItem]] = {}
        for item in items:
            by_suite.setdefault(Path(item.path), []).append(item)
        try:
            for path, suite_items in sorted(by_suite.items()):
                try:
                    result = regenerate(
                        path,
                        registry,
                        allow_packaged=self.run.settings.allow_packaged,
                        case_ids={i.case.id for i in suite_items},
                    )
                except (PackagedSuiteError, Nl2sqlError) as exc:  # refused, a lock wait ran out, ...
                    raise pytest.UsageError(str(exc)) from None
                self.regenerated.extend(result.lines())
                if result.failed:
                    self.upkeep_status["regenerate"] = 1  # the run fails, as `pytest-nl2sql eval regenerate` exits 1
                fresh = load_suite(path)
                self.run.register_suite(path, fresh)
                by_id = {c.id: c for c in fresh.cases}
                for item in suite_items:
                    item.case = by_id.get(item.case.id, item.case)
        finally:
            registry.close()

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if self._starting is not None:  # xdist's controller: once its workers start (under_xdist, "Starting")
            self._header_after_start = True
            return []
        return self._header_lines()

    def _header_lines(self) -> list[str]:
        lines = []
        for path in sorted(self._suite_paths):
            try:
                suite = load_suite(path)
            except SuiteError:
                continue
            approved = [c for c in suite.cases if c.status is Status.APPROVED and case_selected(c, self.run)]
            roles = Counter(len(select_roles(c, self.run)) for c in approved)
            items = sum(k * v for k, v in roles.items())
            width = max(roles) if roles else 0
            lines.append(
                f"nl2sql: {path.name} {len(approved)} approved cases x {width} role{'s' if width != 1 else ''} = {items} items, "
                f"{suite.count(Status.DRAFT)} drafts, {suite.count(Status.RETIRED)} retired "
                f"(mode {self.run.settings.mode})"
            )
            lines.extend(_untested_unanswerable(path, approved, self.run.settings))
        return lines

    # -- items ---------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if isinstance(item, CaseItem) and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
            self._verdict(item, report)
            item.record = None  # the report carries it now (and a worker sends it): the item keeps nothing
            exc = call.excinfo.value if call.excinfo is not None else None
            record = report.nl2sql  # type: ignore[attr-defined]
            if exc is not None and report.failed and not isinstance(exc, (CaseFailure, CaseSuiteError)):
                record["error"] = f"{type(exc).__name__}: {exc}"[:500]  # the reason (a timeout's), not pytest's file:line
            if report.when == "setup" and call.excinfo is not None and isinstance(call.excinfo.value, CaseSuiteError):
                record = report.nl2sql  # type: ignore[attr-defined]
                record["verdict"] = "error"  # the suite's error: outside the accuracy figures
                record["error"] = str(call.excinfo.value)
                report.longrepr = short_repr(item, str(call.excinfo.value))  # the message, not pytest's internals
        return report

    def _verdict(self, item: CaseItem, report: pytest.TestReport) -> None:
        # an item that failed before scoring (setup, an internal error) still leaves a whole record
        record = dict(item.record or make_record(item, self.run.settings.mode, None, None, []))
        failed_scores = failed_scorers(record)
        if report.failed and failed_scores and isinstance(report.longrepr, str):
            report.longrepr = short_repr(item, report.longrepr, record_reason(record))  # the -r line: the reason
        apply_verdict(self.run.baseline_for(item.path), record, report, self.run.settings.mode, strict=self.run.settings.strict_baseline)
        record["failed_scores"] = failed_scores
        if report.failed and not failed_scores and record["verdict"] == "failed" and report.longrepr is not None and not record.get("error"):
            record["error"] = str(report.longrepr).splitlines()[-1][:500] if str(report.longrepr) else "failed"
        report.nl2sql = record  # type: ignore[attr-defined]  # crosses xdist as plain data

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if not self._stale_removed and not _is_worker(self.config) and self._suite_paths:
            self._stale_removed = True  # as the first item runs: never a stale report that looks current
            remove_stale([self.run.settings.out, self.run.settings.html])

    @pytest.hookimpl(trylast=True)  # after the progress line and the predictions file read the record
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if _is_worker(self.config):
            return  # the controller records (a worker's records cross with its reports)
        text = vars(report).pop(TEXT_ATTR, None)  # the record as it crossed from a worker (under_xdist)
        record = getattr(report, "nl2sql", None)
        if record is None:
            if getattr(report, "nl2sql_missing", None):
                return  # reported by plugin.endings: already in self.missing
            if report.failed and report.when not in ("setup", "teardown") and "[" in report.nodeid and self._is_ours(report.nodeid):
                # an item whose worker crashed (xdist reports it with no record): reported, not dropped
                if report.nodeid not in self.crashed:
                    self.crashed.append(report.nodeid)
            return
        if report.outcome == "rerun":  # pytest-rerunfailures: an attempt that failed and runs again
            self.reruns[record["nodeid"]] = self.reruns.get(record["nodeid"], 0) + 1
            return
        if record["nodeid"] in self.reruns:
            record["reruns"] = self.reruns[record["nodeid"]]
            record["flaky"] = bool(record.get("flaky")) or record.get("verdict") in ("passed", "xfail-fixed", "xfailed")
            text = None  # changed here: written out again
        self._record(record, text)
        if record.get("baseline") == "fixed":
            self.fixed.append(record["nodeid"])
        del report.nl2sql  # type: ignore[attr-defined]  # on disk now: pytest keeps every report to the end

    def _is_ours(self, nodeid: str) -> bool:
        path = nodeid.split("::")[0]
        ours = self._ours_by_path.get(path)
        if ours is None:  # asked for every report of every item: one answer per file
            ours = any(p.name == Path(path).name for p in self._suite_paths)
            if len(self._ours_by_path) < 4096:
                self._ours_by_path[path] = ours
        return ours

    # -- end of the run ------------------------------------------------------------------
    def report(self) -> RunReport:
        meta = run_meta(self.run.settings, self._suite_paths, self.started, self.worker_count, self.fixed, self.crashed)
        meta["collected"] = max(len(self.collected), len(self.records) + len(self.crashed))
        meta["missing"] = self.missing
        meta["complete"] = not self.missing
        meta["provenance"] = self.run.provenance(self._suite_paths)
        report = RunReport(None, meta, spool=self._spool)
        billed = billed_after_stop(self.run.ledger if self._owns_ledger else None, report.summary(), self._spool)
        if billed:
            meta["summary_extra"] = billed
            report = RunReport(None, meta, spool=self._spool)
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config):
            return
        if self.upkeep_status:
            failed = any(self.upkeep_status.values())
            if failed:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            elif session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
                session.exitstatus = pytest.ExitCode.OK  # an upkeep-only run did its job
        if not self._suite_paths or self.config.option.collectonly:
            return  # a collect-only run writes no report (it would replace the last real one)
        if not (self.collected or self.records or self.crashed):
            return  # a run that ran no item writes no report
        why = rest_why(session, exitstatus, bool(self.workers_down))
        self.missing = missing_items(self.collected, self.records, self.crashed, why)
        self.interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if self.missing and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a run that lost items never reads green
        report = self.report()
        self.final = report
        settings = self.run.settings
        errors = self.output_errors
        if settings.out is not None:
            self.out_written = write_output("--nl2sql-out", settings.out, lambda: report.write_json(settings.out), errors)
        write_output("GITHUB_STEP_SUMMARY", os.environ.get("GITHUB_STEP_SUMMARY"), report.append_github_summary, errors)
        if settings.update_baseline and self.interrupted:
            self.baseline_refused = " baseline not updated: the run was interrupted (an interrupted run never updates the baseline)"
        elif settings.update_baseline:
            self._update_baselines()
        else:
            self.stale = stale_entries(self.run.baselines.values(), self._suite_paths)
            if self.stale and settings.strict_baseline and session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED  # strict: stale entries fail the run
        self.finish_lines, finish_failed = finish_run(report, settings, errors)  # leak gate, compare, HTML
        if finish_failed == SERIES_BREAK and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = SERIES_BREAK  # distinct: the runs are about different databases
        elif finish_failed and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.crashed and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if errors and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, SERIES_BREAK):
            session.exitstatus = OUTPUT_ERROR  # distinct: the run's outputs are not all there
        self.config.hook.pytest_nl2sql_report(config=self.config, report=report)

    def _update_baselines(self) -> None:
        records = self._spool.records() if self._spool is not None else ()
        self.baseline_changes = update_baselines(records, self._suite_paths, self.run.settings, self.output_errors)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if _is_worker(config):
            return
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and not self._suite_paths:
            hint = project_above(Path(str(config.rootpath)), Path.cwd())
            if hint:
                terminalreporter.write_line(hint, yellow=True)
        if self.upkeep_lines:
            terminalreporter.section("nl2sql upkeep")
            for line in self.upkeep_lines:
                terminalreporter.write_line(line)
        if not self._suite_paths or not (self.records or self.crashed or self.regenerated or self.missing):
            return
        report = getattr(self, "final", None) or self.report()
        terminalreporter.section("nl2sql")
        incomplete = incomplete_line(report.meta)
        if incomplete:
            terminalreporter.write_line(incomplete, red=True)
        for line in self.regenerated:
            terminalreporter.write_line(line)
        for line in report.lines():
            terminalreporter.write_line(line)
        if self.crashed:
            terminalreporter.write_line(f" crashed (not scored): {', '.join(self.crashed)}", red=True)
        if self.workers_down:
            terminalreporter.write_line(f" workers down: {', '.join(self.workers_down)}", red=True)
        if getattr(self, "stale", None):
            strict = self.run.settings.strict_baseline
            terminalreporter.write_line(
                f" {len(self.stale)} stale baseline entries (cases or roles the suites no longer have)"
                + ("; they fail the run (strict baseline)" if strict else ""),
                red=strict, yellow=not strict,
            )
            for line in stale_lines(self.stale):
                terminalreporter.write_line(line)
        for line in getattr(self, "finish_lines", None) or []:
            terminalreporter.write_line(line, red=line.startswith((" leak gate FAILED", " compare: ")))
        if getattr(self, "baseline_refused", None):
            terminalreporter.write_line(self.baseline_refused, red=True)
        for change in getattr(self, "baseline_changes", None) or []:
            for line in change.lines():
                terminalreporter.write_line(" " + line if not line.startswith("  ") else line)
        if self.run.settings.out is not None and getattr(self, "out_written", False):
            terminalreporter.write_line(f" JSON report: {self.run.settings.out}")
        for line in self.output_errors:
            terminalreporter.write_line(line, red=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.sigterm.uninstall()
        STORE.flush()
        STORE.enable(None)
        if self._owns_ledger and self.run.ledger is not None:
            self.run.ledger.remove()
        if not _is_worker(config):
            for ledger in self.run.llm_ledgers.values():
                ledger.remove()
        if self._spool is not None:
            self._spool.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def testmon_environment(config: pytest.Config, run: Any, suite_paths: Any) -> None:
    """pytest-testmon selects items by the Python code they ran, so a changed nl2sql.yaml, suite
    or database file changes nothing it sees. Its environment name (``--testmon-env``) is
    extended with a digest of those files (for SQLite and DuckDB files: size and mtime;
    PostgreSQL: the URL only): a change starts a new testmon environment, in which every item
    runs once (docs/plugin.md#pytest-testmon). Called before testmon reads the option."""
    digest = hashlib.sha256()
    path = run.config_path()
    files = [path] if path is not None else []
    for p in [*files, *sorted(suite_paths)]:
        try:
            digest.update(str(p).encode() + b"\0" + Path(p).read_bytes() + b"\0")
        except OSError:
            digest.update(f"{p}: unreadable\0".encode())
    project = run.project if path is not None else None
    for name, ds in sorted((getattr(project, "datasources", None) or {}).items()):
        url = str(getattr(ds, "url", ""))
        digest.update(f"{name}={url}\0".encode())
        scheme, _, rest = url.partition(":///")
        if scheme.split("+")[0] in ("sqlite", "duckdb") and rest:
            db = Path(rest.split("?")[0])
            db = db if db.is_absolute() else Path(path).parent / db  # type: ignore[arg-type]
            try:
                st = db.stat()
                digest.update(f"{st.st_size}:{st.st_mtime_ns}\0".encode())
            except OSError:
                digest.update(b"missing\0")
    own = str(getattr(config.option, "environment_expression", "") or "")
    if not own:
        from testmon.testmon_core import eval_environment  # the ini key, as testmon reads it

        own = eval_environment(config.getini("environment_expression"))
    config.option.environment_expression = f"{own}{'+' if own else ''}nl2sql-{digest.hexdigest()[:16]}"


def _check_logins(registry: Any) -> None:
    """A PostgreSQL login that could write stops the run before anything runs (docs/security.md)."""
    from pytest_nl2sql.datasources import QueryError

    try:
        registry.check_logins()
    except QueryError as exc:
        if exc.kind == "refused":
            raise pytest.UsageError(exc.message) from None
        # unreachable and the like are reported case by case, as before


def _no_suites(run: Any) -> None:
    """An nl2sql option was given but there is nothing to run: say why, run nothing."""
    found = run.config_path()
    if found is None:
        raise pytest.UsageError(
            f"no nl2sql.yaml found (looked in the rootdir {run.config.rootpath} and in every "
            f"folder above {Path.cwd()}): pass --nl2sql-config PATH/TO/nl2sql.yaml or "
            "--nl2sql-suite FILE, or run in a project made by `pytest-nl2sql init --demo DIR`"
        )
    raise pytest.UsageError(
        f"{found}: its evals.yaml lists no suites, so there is nothing to run: pass "
        "--nl2sql-suite FILE or list suites in evals.yaml beside it"
    )


def _untested_unanswerable(path: Path, approved: list[Any], settings: Any) -> list[str]:
    """Mode plans: an unanswerable case without a plan is answered not_answerable by the fake
    LLM whatever the engine would do, so it tests nothing; the header says so."""
    if settings.mode != "plans" or settings.predictions is not None:
        return []
    untested = [
        c.id for c in approved
        if not c.plan and c.kind.value == "answer" and any(o.value == "unanswerable" for o in c.outcome.values())
    ]
    if not untested:
        return []
    shown = ", ".join(untested[:5]) + (f" and {len(untested) - 5} more" if len(untested) > 5 else "")
    return [
        f"nl2sql: {path.name}: {len(untested)} unanswerable cases have no plan ({shown}); in mode plans "
        "the fake LLM answers not_answerable for them, so they pass without testing the engine "
        "(give each a plan {kind: not_answerable, reason: ...} to test the not-answerable path, or run mode full)"
    ]
