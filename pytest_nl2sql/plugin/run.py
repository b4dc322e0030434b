"""One process's view of an nl2sql run: settings, project config, engine, LLM, cost ledger.

``run_item`` is what a ``CaseItem`` does, one way, each stage once: ``scheduler.answer`` asks the
engine for every attempt (route only in mode retrieval; answer with the case's plan in mode
plans; with the configured LLM in mode full; maybe prefetched: plugin/concurrency.py), ``judge``
calls every scorer, ``record`` keeps the record for the report and fails the item with a
readable report when a gating score failed. An engine that raises fails that item only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from pytest_nl2sql.engine.protocol import import_object as _import_object
from pytest_nl2sql.errors import Nl2sqlError, SuiteError
from pytest_nl2sql.plugin.asking import Asked
from pytest_nl2sql.plugin.collect import CaseFailure
from pytest_nl2sql.plugin.concurrency import Scheduler
from pytest_nl2sql.plugin.failfast import FailFast
from pytest_nl2sql.plugin.ledger import CostLedger
from pytest_nl2sql.plugin.options import Settings
from pytest_nl2sql.reporting import provenance
from pytest_nl2sql.reporting.baseline import Baseline, BaselineError, baseline_key, beside
from pytest_nl2sql.reporting.repeats import Judged, combine
from pytest_nl2sql.reporting.report import failure_text, make_record
from pytest_nl2sql.reporting.taxonomy import for_item as miss_taxonomy
from pytest_nl2sql.scoring.clarification import record_fields as clarification_record
from pytest_nl2sql.scoring.scorers import Score, ScoreContext
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalSuite, Kind, Outcome, Status

if TYPE_CHECKING:
    from pytest_nl2sql.plugin.collect import CaseItem

__all__ = ["Judgement", "Nl2sqlRun", "Scored", "import_object"]


def import_object(dotted: str) -> Any:
    """``package.module:attr`` -> the object (``engine.protocol.import_object``); a usage error when it cannot be imported."""
    try:
        return _import_object(dotted)
    except LookupError as exc:
        raise pytest.UsageError(str(exc)) from None




@attrs.frozen
class Scored:
    """One attempt judged: what was asked, its scores, and its failure text if it failed."""

    asked: Asked
    scores: list[Score]
    failure: str | None


@attrs.frozen
class Judgement:
    """An item judged: its attempts, or why it was not asked (the cost cap)."""

    attempts: tuple[Scored, ...] = ()
    skipped: str | None = None


class Nl2sqlRun:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.suites: dict[Path, EvalSuite] = {}
        self._project: Any = None
        self._project_loaded = False
        self._engine: Any = None
        self._provenance: dict[str, Any] | None = None
        self._provenance_early: _Early | None = None
        self._llms: dict[str | None, Any] = {}  # the LLM client of each named config (None: llm:)
        self.llm_ledgers: dict[str, CostLedger] = {}  # --nl2sql-llm with --nl2sql-max-cost: each config's share
        self.ledger: CostLedger | None = None
        self.baselines: dict[Path, Baseline] = {}
        self._baseline_of: dict[Path, Baseline | None] = {}  # suite path -> its baseline (or none), looked up once a run
        self.records: list[dict[str, Any]] = []
        self.fixed: list[str] = []
        self.worker_crashes: list[str] = []
        self.failfast = FailFast()
        self.scheduler = Scheduler(self)  # engine calls in flight (plugin/concurrency.py)
        config.pluginmanager.register(self.scheduler, "nl2sql_scheduler")

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
                    raise pytest.UsageError(
                        f"--nl2sql-config: no such file: {path} (name your project's nl2sql.yaml; `pytest-nl2sql init DIR` makes one)"
                    )
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
                raise pytest.UsageError(
                    f"--nl2sql-suite: no such suite file: {path} (a path from the current folder; "
                    "`pytest-nl2sql eval seed` drafts a suite, `pytest-nl2sql init DIR` writes an example)"
                )

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
            routing = {c.id for c in suite.cases if c.kind is Kind.ROUTING}
            fix = (
                "routing cases have no plan: run them with --nl2sql-mode retrieval"
                if set(lacking) <= routing
                else f"`pytest-nl2sql suite plan {path}` writes them from each case's SQL, "
                "or run with --nl2sql-mode retrieval or full"
            )
            raise pytest.UsageError(f"--nl2sql-mode plans: {path.name} has cases without a plan ({shown}); {fix}")

    def precheck(self, suites: list[Path] | None = None) -> None:
        """Fail fast, with one line, on options that cannot work (before collection)."""
        self.precheck_options()
        self.precheck_engine(suites)
        self.precheck_suites(suites)

    def precheck_options(self) -> None:
        """The checks of the options alone (nothing is built, no file but the suites' is looked at)."""
        self.check_suites_exist()
        if hasattr(self.config, "workerinput"):
            return  # the controller checked them before starting this worker
        option = self.config.option
        if getattr(option, "dist", None) == "each" and len(getattr(option, "tx", None) or ()) > 1 and not option.collectonly:
            raise pytest.UsageError(
                "--dist each runs every item on every worker: each case would be asked once per worker and "
                "the report would keep one answer of each; use --dist load (or worksteal, loadscope) to spread "
                "the suites over the workers, or --nl2sql-repeat K to ask every case K times (pass^k)"
            )
        if getattr(option, "numprocesses", None):
            for given, what in ((self.settings.regenerate, "--nl2sql-regenerate rewrites suites once, in one process"),
                                (self.settings.seed, "--nl2sql-seed writes one drafts file")):  # fmt: skip
                if given:
                    raise pytest.UsageError(f"{what}: run it without -n (or with -n 0)")

    def precheck_engine(self, suites: list[Path] | None = None) -> None:
        """The checks that build something: the engine (and its setup check), the LLMs."""
        if (suites or self.settings.suites) and not self.config.option.collectonly:
            engine = self.engine  # no engine is a usage error now, not a failure per item
            check = getattr(engine, "check_setup", None)
            if check is not None:
                try:
                    check()
                except Nl2sqlError as exc:
                    raise pytest.UsageError(str(exc)) from None
            for name in self.settings.llms:
                self.llm_config(name)  # an unknown --nl2sql-llm NAME is a usage error now
            if self.settings.mode == "full" and getattr(engine, "needs_llm", True) and self.settings.predictions is None:
                for name in self.settings.llms or (None,):
                    self.shared_llm(name)  # a missing key or llm section is a usage error now, too

    def precheck_suites(self, suites: list[Path] | None = None) -> None:
        """The checks that read the suites (a cold YAML parse; the controller fills the cache)."""
        worker = hasattr(self.config, "workerinput")
        roles_named: set[str] = set()
        selectable: set[str] = set()  # what --nl2sql-cases can name: tags and datasources
        for path in suites if suites is not None else self.settings.suites:
            try:
                suite = load_suite(path, write_cache=not worker)  # the controller fills the cache once
            except SuiteError:
                continue  # collection reports it, with every problem
            self.check_mode(path, suite)
            roles_named.update(role for case in suite.cases for role in case.outcome)
            selectable.update(n for case in suite.cases for n in (*case.tags, *case.datasources))
            try:
                self.baseline_for(Path(path))  # a broken baseline is a usage error, now
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        named_lower = {r.lower() for r in roles_named}
        unknown = sorted(r for r in self.settings.roles if r.lower() not in named_lower) if self.settings.roles and roles_named else []
        if unknown:
            raise pytest.UsageError(
                f"--nl2sql-roles: no case names the role {', '.join(map(repr, unknown))} "
                f"(the suites' roles: {', '.join(sorted(roles_named))})"
            )

        self._check_cases_filter(selectable)

    def _check_cases_filter(self, selectable: set[str]) -> None:
        """--nl2sql-cases names only tags or datasources some case has (else: did you mean)."""
        if not self.settings.cases or not selectable:
            return
        import difflib

        known = {n.lower(): n for n in selectable}
        unknown = [w for w in self.settings.cases if w.lower() not in known]
        if unknown:
            hints = []
            for word in unknown:
                close = difflib.get_close_matches(word.lower(), list(known), n=1)
                hints.append(f"{word!r}" + (f" (did you mean {known[close[0]]!r}?)" if close else ""))
            raise pytest.UsageError(
                f"--nl2sql-cases: no case has the tag or datasource {', '.join(hints)}; "
                f"the suites' tags and datasources: {', '.join(sorted(selectable, key=str.lower))}"
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

    def neighbourhood(self) -> Any:
        """--nl2sql-test-suite K: the neighbour databases of the project's SQLite datasources
        (built on first use, cached in .nl2sql-cache/neighbours beside nl2sql.yaml), else None."""
        if not self.settings.test_suite:
            return None
        if getattr(self, "_neighbourhood", None) is None:
            from pytest_nl2sql.scoring.neighbours import from_project

            path = self.config_path()
            root = path.parent if path is not None else Path(str(self.config.rootpath))
            self._neighbourhood = from_project(
                self.project, self.settings.test_suite, root / ".nl2sql-cache" / "neighbours", golds=self._golds_of
            )
        return self._neighbourhood

    def _golds_of(self, datasource: str) -> list[str]:
        """The gold SQL of the approved cases about ``datasource`` (for distilled neighbours)."""
        out: list[str] = []
        for suite in self.suites.values():
            for case in suite.cases:
                if case.status is Status.APPROVED and case.sql and [d.lower() for d in case.datasources] == [datasource.lower()]:
                    out.append(case.sql)
        return out

    # -- engine and LLM -------------------------------------------------------------
    @property
    def engine(self) -> Any:
        if self._engine is None:
            engine = self.config.hook.pytest_nl2sql_make_engine(config=self.config, project=self.project)
            if engine is None:
                raise pytest.UsageError(
                    "no engine: create nl2sql.yaml (`pytest-nl2sql init DIR`) or pass --nl2sql-config, "
                    "or return one from pytest_nl2sql_make_engine in a conftest.py"
                )
            self._engine = engine
        return self._engine

    def llm_for(self, item: CaseItem, attempt: int = 0, usage: Any = None) -> Any:
        if not getattr(self._engine, "needs_llm", True):
            return None  # the engine has its own model (the protocol: llm is passed as None)
        mode = self.settings.mode
        if mode == "plans":
            from pytest_nl2sql.engine.plan.specplan import is_spec_plan
            from pytest_nl2sql.llm import FakeLLM

            plan = item.case.plan
            if plan is None:
                if item.case.outcome[item.role] is Outcome.UNANSWERABLE or not item.case.answerable:
                    plan = {"kind": "not_answerable", "reason": "the case is unanswerable"}
            elif is_spec_plan(plan) and plan.get("datasource") is None and len(item.case.datasources) == 1:
                # nl2sql-engine's plan names no datasource: it is written for the case's one
                plan = {**plan, "datasource": item.case.datasources[0]}
            return FakeLLM({item.case.question: plan} if plan is not None else {})
        from pytest_nl2sql.plugin.accounting import MeteredLLM, Usage

        return MeteredLLM(self.shared_llm(item.llm), usage if usage is not None else Usage(), attempt=attempt, failfast=self.failfast)

    def llm_config(self, name: str | None) -> Any:
        """The project's ``llm:``, or with a name (--nl2sql-llm NAME) its ``llms.NAME``; a usage
        error naming the known ones when nl2sql.yaml has none of that name."""
        project = self.project
        if project is None:
            if name is not None:
                raise pytest.UsageError(f"--nl2sql-llm {name}: needs nl2sql.yaml with llms: {{{name}: {{model: ...}}}} (docs/config.md)")
            raise pytest.UsageError(
                "--nl2sql-mode full needs nl2sql.yaml with an llm section (llm: base_url, model, api_key_env; docs/llm.md)"
            )
        if name is None:
            return project.llm
        named = getattr(project, "llms", None) or {}
        if name not in named:
            known = ", ".join(sorted(named)) or "none: add llms: {NAME: {model: ...}}"
            raise pytest.UsageError(f"--nl2sql-llm {name}: {project.path} has no llms.{name} (known: {known}; docs/config.md)")
        return named[name]

    def shared_llm(self, name: str | None = None) -> Any:
        """The configured LLM of mode full (``name``: a named config), built once per process;
        each named config has its own response cache folder."""
        if name not in self._llms:
            config = self.llm_config(name)
            from pytest_nl2sql.llm import LLMError, OpenAICompatibleLLM

            try:
                llm = OpenAICompatibleLLM.from_config(config)
            except LLMError as exc:
                raise pytest.UsageError(f"--nl2sql-mode full{f' (--nl2sql-llm {name})' if name else ''}: {exc}") from None
            if self.settings.cache:
                from pytest_nl2sql.llm.cache import ResponseCache

                llm.cache = ResponseCache(self.cache_dir() / name if name else self.cache_dir())
            self._llms[name] = llm
        return self._llms[name]

    def provenance(self, suites: Any) -> dict[str, Any]:
        """``run.provenance`` (reporting/provenance.py), collected once, on the controller: by
        the thread :meth:`start_provenance` started, when it did."""
        early, self._provenance_early = self._provenance_early, None
        if early is not None and self._provenance is None:
            early.join()
            self._provenance = early.result  # None when it raised: collected again here, the error said
        if self._provenance is None:
            self._provenance = self._collect_provenance(suites)
        return self._provenance

    def start_provenance(self, suites: Any) -> None:
        """Collect ``run.provenance`` on a thread while the run goes on (the controller of an
        xdist run, whose own thread only relays reports): its git calls, its introspection of
        every datasource and its digest of every case no longer wait until the last item is in.
        Nothing of the suites or datasources it reads is written during such a run
        (--nl2sql-regenerate is refused with -n)."""
        if self._provenance is not None or self._provenance_early is not None:
            return
        self._provenance_early = _Early(lambda: self._collect_provenance(suites))

    def _collect_provenance(self, suites: Any) -> dict[str, Any]:
        project = self.project
        named = self.settings.engine or getattr(project, "engine", None)
        root = project.root if project is not None else Path(str(self.config.rootpath))
        return provenance.collect(suites, project, root, self._engine, named)

    def cache_dir(self) -> Path:
        """--nl2sql-cache-dir, else .nl2sql-cache/llm beside nl2sql.yaml (else the rootdir)."""
        if self.settings.cache_dir is not None:
            return self.settings.cache_dir
        path = self.config_path()
        return (path.parent if path is not None else Path(str(self.config.rootpath))) / ".nl2sql-cache" / "llm"

    def suite_match(self, suite: EvalSuite | None) -> dict[str, Any] | None:
        """The suite's ``match:`` over the project's defaults (an nl2sql-engine project's
        result_match is nl2sql-engine's rule: docs/scoring.md, "column order")."""
        project = self.project
        merged = {**(getattr(project, "match_defaults", None) or {}), **(dict(suite.match) if suite is not None and suite.match else {})}
        return merged or None

    def recall_threshold(self) -> float | None:
        """--nl2sql-recall-threshold; in an nl2sql-engine project outside mode plans, 1.0 (its
        evaluator's retrieval_recall passes at full recall only)."""
        if self.settings.recall_threshold is not None or self.settings.mode == "plans":
            return self.settings.recall_threshold
        project = self.project
        return 1.0 if getattr(project, "source", None) == "nl2sql-engine" else None

    # -- one item: one way, schedule and ask -> judge -> record ----------------------------------
    def run_item(self, item: CaseItem) -> None:
        """Ask (every attempt, maybe prefetched on another thread), judge, record: each stage once."""
        asked = self.scheduler.answer(item)
        judgement = self.judge(item, asked)
        self.record(item, judgement)

    def judge(self, item: CaseItem, asked: Sequence[Asked]) -> Judgement:
        """Score every attempt (on pytest's thread): its scores and, if it failed, its report."""
        if asked[0].skipped:
            return Judgement(skipped=asked[0].skipped)
        return Judgement(attempts=tuple(self._score(item, attempt) for attempt in asked if not attempt.skipped))

    def _score(self, item: CaseItem, asked: Asked) -> Scored:
        case, role, mode = item.case, item.role, self.settings.mode
        answer, route = asked.answer, asked.route
        refusal = getattr(self._engine, "refusal_message", None)
        path = item.path
        suite = self.suites.get(path if isinstance(path, Path) else Path(path))  # a node's path is a Path: no copy to hash
        ctx = ScoreContext(
            case=case,
            role=role,
            expected=item.expected,
            mode=mode,
            answer=answer,
            route=route,
            suite_match=self.suite_match(suite),
            recall_threshold=self.recall_threshold(),
            refusal_message=refusal,
            test_suite=self.neighbourhood(),
            clarify=self.settings.clarify,
            conversation=asked.conversation,
        )
        scores: list[Score] = []
        for result in self.config.hook.pytest_nl2sql_score(context=ctx):
            if result is None:
                continue
            scores.extend(result if isinstance(result, list) else [result])
        if answer is not None and answer.status == "error" and not any(s.passed is False for s in scores):
            scores.append(Score("engine", False, 0.0, answer.error or "engine error"))
        failed = [s for s in scores if s.gating and s.passed is False]
        failure = failure_text(item, mode, answer, route, scores) if failed else None
        return Scored(asked, scores, failure)

    def record(self, item: CaseItem, judgement: Judgement) -> None:
        """Keep the item's record (its attempts combined: reporting/repeats.py); skip or fail it."""
        mode = self.settings.mode
        if judgement.skipped:
            item.record = make_record(item, mode, None, None, [], skipped=judgement.skipped)
            pytest.skip(judgement.skipped)
        judged = []
        for scored in judgement.attempts:
            asked, answer, scores = scored.asked, scored.asked.answer, scored.scores
            record = make_record(item, mode, answer, asked.route, scores, latency=asked.latency)
            record["taxonomy"] = miss_taxonomy(item.case, answer, scores)  # what kind of result_match miss, if one
            record["llm"] = asked.usage.to_dict()
            record.update(clarification_record(scores, asked.conversation))  # --nl2sql-clarify: flags and turns
            if answer is not None and answer.datasources:
                record["answer_datasources"] = list(answer.datasources)
            if asked.attempt == 0 and self.config.getini("junit_family") in ("xunit1", "legacy"):
                # per-testcase <properties> are valid only in xunit1 (junit-10.xsd, pytest's default
                # xunit2, forbids them: pytest's record_property warns the same)
                for s in scores:
                    item.user_properties.append((f"nl2sql.{s.name}", "pass" if s.passed else ("fail" if s.passed is False else f"{s.value}")))
                if answer is not None:
                    item.user_properties.append(("nl2sql.status", answer.status))
                    item.user_properties.append(("nl2sql.cost_usd", f"{answer.cost_usd:.6f}"))
            judged.append(Judged(record, scored.failure, asked.attempt))
        record, failure = combine(judged, self.settings.repeat)
        item.record = record
        if failure is not None:
            raise CaseFailure(failure)

    # -- baselines -----------------------------------------------------------------------
    def baseline_for(self, suite_path: Path) -> Baseline | None:
        """The baseline of a suite (--nl2sql-baseline, else beside it), or None: found once a
        run (every item asks; precheck asked first), so an item costs no stat of the file."""
        try:
            return self._baseline_of[suite_path]
        except KeyError:
            pass
        found = self._baseline_for(suite_path)
        self._baseline_of[suite_path] = found
        return found

    def _baseline_for(self, suite_path: Path) -> Baseline | None:
        path = self.settings.baseline or beside(suite_path)
        if path not in self.baselines:
            if not (path.exists() or path.is_symlink()) and not self.settings.update_baseline:
                return None  # a folder, a symlink loop, a dangling link: an error below, never "no baseline"
            baseline = Baseline.load(path)
            if self.settings.update_baseline:
                baseline = baseline.in_mode(self.settings.mode)  # a version 1 file is migrated
            else:
                baseline.require_current()
            self.baselines[path] = baseline
        return self.baselines[path]

    def baseline_key(self, item: CaseItem) -> str:
        return baseline_key(item.path, item.case.id, item.role)


class _Early:
    """``compute()`` on a daemon thread; ``result`` once joined (None when it raised)."""

    def __init__(self, compute: Any) -> None:
        self.result: Any = None
        self._compute = compute
        self._thread = threading.Thread(target=self._run, name="nl2sql-provenance", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = self._compute()
        except Exception:  # noqa: BLE001,S110 -- collected again on the caller's thread, which says why
            pass

    def join(self) -> None:
        self._thread.join()
