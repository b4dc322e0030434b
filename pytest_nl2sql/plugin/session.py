"""The session plugin object: collection wiring, records, baseline verdicts, the run report.

Under xdist, each worker runs items and attaches a plain-dict record to each report; the
controller receives the reports, keeps the records and alone writes files (the JSON report,
an updated baseline) -- once, in ``pytest_sessionfinish``.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.errors import Nl2sqlError, SuiteError
from pytest_nl2sql.plugin.baseline import Baseline, BaselineError
from pytest_nl2sql.plugin.collect import CaseItem, SuiteFile, case_selected, select_roles
from pytest_nl2sql.plugin.ledger import CostLedger
from pytest_nl2sql.plugin.report import RunReport, make_record, run_meta
from pytest_nl2sql.plugin.run import Nl2sqlRun
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import Status

__all__ = ["Nl2sqlSession"]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _add_args(config: pytest.Config, paths: Any) -> None:
    """Append suite paths to pytest's arguments, unless already named there."""
    have = {Path(a.split("::")[0]).resolve() for a in config.args}
    config.args.extend(str(p) for p in paths if Path(p).resolve() not in have)


class Nl2sqlSession:
    def __init__(self, config: pytest.Config, run: Nl2sqlRun) -> None:
        self.config = config
        self.run = run
        self.started = time.time()
        self.records: dict[str, dict[str, Any]] = {}
        self.crashed: list[str] = []
        self.workers_down: list[str] = []
        self.fixed: list[str] = []
        self.ran: list[tuple[Path, str, bool, str, str]] = []
        self.worker_count = 0
        self.regenerated: list[str] = []
        self.upkeep_lines: list[str] = []
        self.upkeep_status: dict[str, int] = {}
        self._suite_paths: set[Path] = set()
        self._owns_ledger = False
        self._setup()

    # -- configuration ----------------------------------------------------------------
    def _setup(self) -> None:
        config, run = self.config, self.run
        source = config.args_source
        explicit = bool(run.settings.explicit or run.settings.suites)
        # an nl2sql option was given: run those suites (default: what evals.yaml names), alone
        # unless test paths were given too
        named = []  # suite files (or node ids in them) named on the command line
        if source == pytest.Config.ArgsSource.ARGS:
            for arg in config.args:
                path = Path(arg.split("::")[0])
                if path.suffix in (".yaml", ".yml") and path.is_file():
                    named.append(path.resolve())
        suites = run.default_suites() if explicit and (run.settings.suites or not named) else ()
        known = {Path(p).resolve() for p in suites} | set(named)
        if suites:
            if source != pytest.Config.ArgsSource.ARGS:
                config.args[:] = [str(p) for p in suites]
            else:
                _add_args(config, suites)
        # in a project folder (nl2sql.yaml in the rootdir), the suites evals.yaml names are
        # collected wherever pytest's own walk meets them, beside the project's ordinary tests
        if not explicit and (Path(str(config.rootpath)) / "nl2sql.yaml").is_file():
            project_suites = [Path(p).resolve() for p in run.default_suites()]
            known.update(project_suites)
            if source == pytest.Config.ArgsSource.TESTPATHS:
                _add_args(config, project_suites)
        self._suite_paths = known
        if run.settings.mode == "full" or run.settings.max_cost is not None:
            if _is_worker(config):
                path = config.workerinput.get("nl2sql_ledger")  # type: ignore[attr-defined]
                if path:
                    run.ledger = CostLedger(path, run.settings.max_cost)
            else:
                run.ledger = CostLedger.create(run.settings.max_cost)
                self._owns_ledger = True

    def is_suite_path(self, path: Path) -> bool:
        return Path(path).resolve() in self._suite_paths

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        self.worker_count += 1
        if self.run.ledger is not None:
            node.workerinput["nl2sql_ledger"] = str(self.run.ledger.path)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            name = node.gateway.id if hasattr(node, "gateway") else str(node)
            self.workers_down.append(f"{name}: {error}")

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.run.precheck(sorted(self._suite_paths))
        if not _is_worker(self.config):
            self._upkeep()

    def _upkeep(self) -> None:
        """--nl2sql-seed and --nl2sql-audit: once, in the controller, before anything runs."""
        settings = self.run.settings
        if not (settings.seed or settings.audit):
            return
        project = self.run.project
        if project is None:
            raise pytest.UsageError("--nl2sql-seed and --nl2sql-audit need nl2sql.yaml (its datasources)")
        if settings.seed and getattr(self.config.option, "numprocesses", None):
            raise pytest.UsageError("--nl2sql-seed writes one drafts file: run it without -n (or with -n 0)")
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
                paths, project, fail_on_warnings=settings.audit_warnings, echo=self.upkeep_lines.append
            )

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if self.is_suite_path(file_path):
            return SuiteFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
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
            raise pytest.UsageError("--nl2sql-regenerate needs nl2sql.yaml (its datasources run the SQL)")
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
                fresh = load_suite(path)
                self.run.register_suite(path, fresh)
                by_id = {c.id: c for c in fresh.cases}
                for item in suite_items:
                    item.case = by_id.get(item.case.id, item.case)
        finally:
            registry.close()

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
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
        return lines

    # -- items ---------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if isinstance(item, CaseItem) and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
            self._verdict(item, report)
        return report

    def _verdict(self, item: CaseItem, report: pytest.TestReport) -> None:
        # an item that failed before scoring (setup, an internal error) still leaves a whole record
        record = dict(item.record or make_record(item, self.run.settings.mode, None, None, []))
        failed_scores = [n for n, s in record.get("scores", {}).items() if s.get("passed") is False and s.get("gating")]
        baseline = self.run.baseline_for(item.path)
        key = self.run.baseline_key(item)
        known = baseline.known(key) if baseline is not None else None
        if report.failed:
            verdict = "failed"
            if known is not None:
                report.outcome = "skipped"
                report.wasxfail = f"known failure (baseline): {known.get('reason', '')}"[:300]
                verdict = "xfailed"
        elif report.skipped:
            verdict = "skipped"
        else:
            verdict = "passed"
            if known is not None:
                verdict = "xfail-fixed"
                record["baseline"] = "fixed"
                if self.run.settings.strict_baseline:
                    verdict = "failed"
                    report.outcome = "failed"
                    report.longrepr = f"{key}: a known failure now passes (strict baseline): remove it with --nl2sql-update-baseline"
        record["verdict"] = verdict
        record["failed_scores"] = failed_scores
        if report.failed and not failed_scores and verdict == "failed" and report.longrepr is not None and not record.get("error"):
            record["error"] = str(report.longrepr).splitlines()[-1][:500] if str(report.longrepr) else "failed"
        report.nl2sql = record  # type: ignore[attr-defined]  # crosses xdist as plain data

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "nl2sql", None)
        if record is None:
            if report.failed and report.when not in ("setup", "teardown") and "[" in report.nodeid and self._is_ours(report.nodeid):
                # an item whose worker crashed (xdist reports it with no record): reported, not dropped
                if report.nodeid not in self.crashed:
                    self.crashed.append(report.nodeid)
            return
        self.records[record["nodeid"]] = record
        if record.get("baseline") == "fixed":
            self.fixed.append(record["nodeid"])

    def _is_ours(self, nodeid: str) -> bool:
        path = nodeid.split("::")[0]
        return any(p.name == Path(path).name for p in self._suite_paths)

    # -- end of the run ------------------------------------------------------------------
    def report(self) -> RunReport:
        meta = run_meta(self.run.settings, self._suite_paths, self.started, self.worker_count, self.fixed, self.crashed)
        return RunReport(list(self.records.values()), meta)

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
        if not self._suite_paths:
            return
        report = self.report()
        self.final = report
        settings = self.run.settings
        if settings.out is not None:
            report.write_json(settings.out)
        report.append_github_summary()
        if settings.update_baseline:
            self._update_baselines()
        if self.crashed and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.config.hook.pytest_nl2sql_report(config=self.config, report=report)

    def _update_baselines(self) -> None:
        by_file: dict[Path, list[tuple[str, bool, str, str]]] = {}
        suites = {p.name: p for p in self._suite_paths}
        for rec in self.records.values():
            if rec.get("verdict") == "skipped":
                continue
            suite_path = suites.get(rec["suite"])
            if suite_path is None:
                continue
            target = self.run.settings.baseline or suite_path.with_name(suite_path.stem + ".baseline.json")
            failed = rec.get("failed_scores") or (["engine"] if rec.get("verdict") in ("failed", "xfailed") else [])
            passed = rec.get("verdict") in ("passed", "xfail-fixed")
            reason = ""
            if not passed:
                details = [rec["scores"].get(n, {}).get("detail", "") for n in failed]
                reason = "; ".join(d for d in details if d)[:300] or (rec.get("error") or "")
            key = f"{rec['suite']}::{rec['case_id']}[{rec['role']}]"
            by_file.setdefault(target, []).append((key, passed, ",".join(failed) or "engine", reason))
        for target, ran in by_file.items():
            try:
                old = Baseline.load(target)
            except BaselineError:
                old = Baseline(target)
            old.updated(ran).write()

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if _is_worker(config):
            return
        if self.upkeep_lines:
            terminalreporter.section("nl2sql upkeep")
            for line in self.upkeep_lines:
                terminalreporter.write_line(line)
        if not self._suite_paths or not (self.records or self.crashed or self.regenerated):
            return
        report = getattr(self, "final", None) or self.report()
        terminalreporter.section("nl2sql")
        for line in self.regenerated:
            terminalreporter.write_line(line)
        for line in report.lines():
            terminalreporter.write_line(line)
        if self.crashed:
            terminalreporter.write_line(f" crashed (not scored): {', '.join(self.crashed)}", red=True)
        if self.workers_down:
            terminalreporter.write_line(f" workers down: {', '.join(self.workers_down)}", red=True)
        if self.run.settings.out is not None:
            terminalreporter.write_line(f" JSON report: {self.run.settings.out}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._owns_ledger and self.run.ledger is not None:
            self.run.ledger.remove()


def _check_logins(registry: Any) -> None:
    """A PostgreSQL login that could write stops the run before anything runs (docs/security.md)."""
    from pytest_nl2sql.datasources import QueryError

    try:
        registry.check_logins()
    except QueryError as exc:
        if exc.kind == "refused":
            raise pytest.UsageError(exc.message) from None
        # unreachable and the like are reported case by case, as before
