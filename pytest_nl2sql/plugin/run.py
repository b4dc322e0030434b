"""One process's view of an nl2sql run: settings, project config, engine, LLM, cost ledger.

``run_item`` is what a ``CaseItem`` does: ask the engine (route only in mode retrieval; answer
with the case's plan in mode plans; with the configured LLM in mode full), call every scorer,
keep the record for the report, and fail the item with a readable report when a gating score
failed. An engine that raises fails that item only.
"""

from __future__ import annotations

import importlib
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nl2sql.engine.protocol import Answer, RouteResult
from pytest_nl2sql.errors import Nl2sqlError, SuiteError
from pytest_nl2sql.plugin.baseline import Baseline, BaselineError, baseline_key, beside
from pytest_nl2sql.plugin.collect import CaseFailure
from pytest_nl2sql.plugin.ledger import CostLedger
from pytest_nl2sql.plugin.options import Settings
from pytest_nl2sql.plugin.report import failure_text, make_record
from pytest_nl2sql.scoring.scorers import Score, ScoreContext
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalSuite, Kind, Outcome, Status

if TYPE_CHECKING:
    from pytest_nl2sql.plugin.collect import CaseItem

__all__ = ["Nl2sqlRun", "import_object"]


def import_object(dotted: str) -> Any:
    """``package.module:attr`` (or ``package.module.attr``) -> the object."""
    if ":" in dotted:
        module, _, attr = dotted.partition(":")
    else:
        module, _, attr = dotted.rpartition(".")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"cannot import {dotted!r}: {exc}") from None
    return obj


def _cost_of(exc: BaseException) -> float:
    """What a failed call already cost (``LLMError.cost_usd``), when the error says."""
    cost = getattr(exc, "cost_usd", 0.0)
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else 0.0


class Nl2sqlRun:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.suites: dict[Path, EvalSuite] = {}
        self._project: Any = None
        self._project_loaded = False
        self._engine: Any = None
        self._llm: Any = None
        self.ledger: CostLedger | None = None
        self.baselines: dict[Path, Baseline] = {}
        self.records: list[dict[str, Any]] = []
        self.fixed: list[str] = []
        self.worker_crashes: list[str] = []

    # -- project -------------------------------------------------------------------
    def config_path(self) -> Path | None:
        """--nl2sql-config (or the ini key), else nl2sql.yaml in the rootdir, else the nearest
        one above the first suite, else above the current folder."""
        if self.settings.config is not None:
            return self.settings.config
        starts = [Path(str(self.config.rootpath))]
        starts += [p.resolve().parent for p in self.settings.suites[:1]]
        starts.append(Path.cwd())
        for i, start in enumerate(starts):
            for folder in (start,) if i == 0 else (start, *start.parents):
                candidate = folder / "nl2sql.yaml"
                if candidate.is_file():
                    return candidate
        return None

    @property
    def project(self) -> Any:
        if not self._project_loaded:
            self._project_loaded = True
            path = self.config_path()
            if path is not None:
                from pytest_nl2sql.config import ConfigError, load_config

                if not path.is_file():
                    raise pytest.UsageError(f"--nl2sql-config: no such file: {path}")
                try:
                    self._project = load_config(path)
                except ConfigError as exc:
                    raise pytest.UsageError(str(exc)) from None
        return self._project

    def default_suites(self) -> tuple[Path, ...]:
        if self.settings.suites:
            return self.settings.suites
        project = self.project
        return tuple(project.evals_suites) if project is not None else ()

    # -- checks before collection ----------------------------------------------------------
    def check_suites_exist(self) -> None:
        for path in self.settings.suites:
            if not path.is_file():
                raise pytest.UsageError(f"--nl2sql-suite: no such suite file: {path}")

    def check_mode(self, path: Path, suite: EvalSuite) -> None:
        if self.settings.mode != "plans" or self.settings.predictions is not None:
            return
        if self._engine is not None and not getattr(self._engine, "needs_llm", True):
            return  # an engine with its own model never asks for the case's plan
        lacking = [
            c.id
            for c in suite.cases
            if c.status is Status.APPROVED
            and (c.kind is Kind.ROUTING or (c.answerable and not c.plan))
        ]
        if lacking:
            shown = ", ".join(lacking[:8]) + (f" and {len(lacking) - 8} more" if len(lacking) > 8 else "")
            raise pytest.UsageError(
                f"--nl2sql-mode plans: {path.name} has cases without a plan ({shown}); "
                "add plans or run with --nl2sql-mode retrieval or full"
            )

    def precheck(self, suites: list[Path] | None = None) -> None:
        """Fail fast, with one line, on options that cannot work (before collection)."""
        self.check_suites_exist()
        workers = getattr(self.config.option, "numprocesses", None)
        if self.settings.regenerate and workers and not hasattr(self.config, "workerinput"):
            raise pytest.UsageError(
                "--nl2sql-regenerate rewrites suites once, in one process: run it without -n (or with -n 0)"
            )
        if (suites or self.settings.suites) and not self.config.option.collectonly:
            engine = self.engine  # no engine is a usage error now, not a failure per item
            check = getattr(engine, "check_setup", None)
            if check is not None:
                try:
                    check()
                except Nl2sqlError as exc:
                    raise pytest.UsageError(str(exc)) from None
            if self.settings.mode == "full" and getattr(engine, "needs_llm", True) and self.settings.predictions is None:
                self.shared_llm()  # a missing key or llm section is a usage error now, too
        worker = hasattr(self.config, "workerinput")
        roles_named: set[str] = set()
        for path in suites if suites is not None else self.settings.suites:
            try:
                suite = load_suite(path, write_cache=not worker)  # the controller fills the cache once
            except SuiteError:
                continue  # collection reports it, with every problem
            self.check_mode(path, suite)
            roles_named.update(role for case in suite.cases for role in case.outcome)
            try:
                self.baseline_for(Path(path))  # a broken baseline is a usage error, now
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        unknown = sorted(self.settings.roles - roles_named) if self.settings.roles and roles_named else []
        if unknown:
            raise pytest.UsageError(
                f"--nl2sql-roles: no case names the role {', '.join(map(repr, unknown))} "
                f"(the suites' roles: {', '.join(sorted(roles_named))})"
            )

    def register_suite(self, path: Path, suite: EvalSuite) -> None:
        self.suites[Path(path)] = suite

    def project_problems(self, suite: EvalSuite) -> list[str]:
        """Approved cases that name a datasource or role nl2sql.yaml does not have."""
        project = self.project if self.settings.predictions is None else None
        if project is None:
            return []
        import difflib

        def hint(name: str, known: list[str]) -> str:
            close = difflib.get_close_matches(name, known, n=1)
            return f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"

        datasources, roles = sorted(project.datasources), sorted(project.roles)
        out = []
        for case in suite.cases:
            if case.status is not Status.APPROVED:
                continue
            where = f"{case.location}: case '{case.id}'" if case.location else f"case '{case.id}'"
            for ds in case.datasources:
                if ds not in project.datasources:
                    out.append(f"{where}: unknown datasource {ds!r} in {project.path.name} ({hint(ds, datasources)})")
            for role in case.outcome:
                if role not in project.roles:
                    out.append(f"{where}: unknown role {role!r} in {project.path.name} ({hint(role, roles)})")
        return out

    # -- engine and LLM -------------------------------------------------------------
    @property
    def engine(self) -> Any:
        if self._engine is None:
            engine = self.config.hook.pytest_nl2sql_make_engine(config=self.config, project=self.project)
            if engine is None:
                raise pytest.UsageError(
                    "no engine: create nl2sql.yaml (nl2sql init --demo DIR) or pass --nl2sql-config, "
                    "or return one from pytest_nl2sql_make_engine in a conftest.py"
                )
            self._engine = engine
        return self._engine

    def llm_for(self, item: CaseItem) -> Any:
        mode = self.settings.mode
        if mode == "plans":
            from pytest_nl2sql.llm import FakeLLM

            plan = item.case.plan
            if plan is None:
                if item.case.outcome[item.role] is Outcome.UNANSWERABLE or not item.case.answerable:
                    plan = {"kind": "not_answerable", "reason": "the case is unanswerable"}
            return FakeLLM({item.case.question: plan} if plan is not None else {})
        if not getattr(self._engine, "needs_llm", True):
            return None
        return self.shared_llm()

    def shared_llm(self) -> Any:
        """The configured LLM of mode full, built once per process."""
        if self._llm is None:
            project = self.project
            if project is None:
                raise pytest.UsageError("--nl2sql-mode full needs nl2sql.yaml with an llm section")
            from pytest_nl2sql.llm import LLMError, OpenAICompatibleLLM

            try:
                self._llm = OpenAICompatibleLLM.from_config(project.llm)
            except LLMError as exc:
                raise pytest.UsageError(f"--nl2sql-mode full: {exc}") from None
        return self._llm

    # -- one item ------------------------------------------------------------------
    def run_item(self, item: CaseItem) -> None:
        case, role, mode = item.case, item.role, self.settings.mode
        answer: Answer | None = None
        route: RouteResult | None = None
        started = time.perf_counter()
        # the budget holds in every mode and for every engine: whatever an answer cost counts
        if self.ledger is not None and not self.ledger.may_spend():
            item.record = make_record(item, mode, None, None, [], skipped="cost cap reached")
            pytest.skip("cost cap reached")
        try:
            engine = self.engine
            if mode == "retrieval" and self.settings.predictions is None:
                route = engine.route(case.question, role)
            else:
                answer_case = getattr(engine, "answer_case", None)  # engines that key on the case (replay)
                if answer_case is not None:
                    answer = answer_case(case, role, self.llm_for(item))
                else:
                    answer = engine.answer(case.question, role, self.llm_for(item))
        except pytest.UsageError:
            raise
        except Exception as exc:  # one failing case never stops the run
            answer = Answer(
                status="error",
                error=f"{type(exc).__name__}: {exc}",
                message="".join(traceback.format_exception_only(type(exc), exc)).strip(),
                cost_usd=_cost_of(exc),  # a failed LLM call may still have been billed
            )
        finally:
            if answer is not None and self.ledger is not None and answer.cost_usd:
                self.ledger.add(answer.cost_usd)
        latency = time.perf_counter() - started
        refusal = getattr(self._engine, "refusal_message", None)
        suite = self.suites.get(Path(item.path))
        ctx = ScoreContext(
            case=case,
            role=role,
            expected=item.expected,
            mode=mode,
            answer=answer,
            route=route,
            suite_match=dict(suite.match) if suite is not None and suite.match else None,
            recall_threshold=self.settings.recall_threshold,
            refusal_message=refusal,
        )
        scores: list[Score] = []
        for result in self.config.hook.pytest_nl2sql_score(context=ctx):
            if result is None:
                continue
            scores.extend(result if isinstance(result, list) else [result])
        record = make_record(item, mode, answer, route, scores, latency=latency)
        item.record = record
        for s in scores:
            item.user_properties.append((f"nl2sql.{s.name}", "pass" if s.passed else ("fail" if s.passed is False else f"{s.value}")))
        if answer is not None:
            item.user_properties.append(("nl2sql.status", answer.status))
            item.user_properties.append(("nl2sql.cost_usd", f"{answer.cost_usd:.6f}"))
        if answer is not None and answer.status == "error" and not any(s.passed is False for s in scores):
            scores.append(Score("engine", False, 0.0, answer.error or "engine error"))
            record["scores"]["engine"] = {"passed": False, "value": 0.0, "detail": answer.error or "engine error", "gating": True}
        failed = [s for s in scores if s.gating and s.passed is False]
        if failed:
            raise CaseFailure(failure_text(item, mode, answer, route, scores))

    # -- baselines -----------------------------------------------------------------------
    def baseline_for(self, suite_path: Path) -> Baseline | None:
        path = self.settings.baseline or beside(suite_path)
        if path not in self.baselines:
            if not path.is_file() and not self.settings.update_baseline:
                return None
            self.baselines[path] = Baseline.load(path)
        return self.baselines[path]

    def baseline_key(self, item: CaseItem) -> str:
        return baseline_key(item.path, item.case.id, item.role)
