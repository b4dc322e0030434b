"""Collection: a suite file becomes one item per approved case x role.

Collection only reads (the loader's cache aside) and gives the same items in every xdist
worker. Node ids are stable: ``evals/chinook.yaml::chinook_001[analyst]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import _pytest
import pluggy
import pytest

from pytest_nl2sql import collector
from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.plugin.under_xdist import DIGESTS_KEY, suite_digests
from pytest_nl2sql.reporting.shards import shard_of
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalCase, EvalSuite, Kind, Outcome, Status, rows_problem

__all__ = ["CaseFailure", "CaseItem", "CaseSuiteError", "ItemRunner", "SuiteFile", "select_roles", "select_shard"]


class ItemRunner(Protocol):
    """What collection needs of the run (``plugin.run.Nl2sqlRun`` is one); collection never
    imports the run, the run imports collection."""

    settings: Any

    def project_problems(self, suite: EvalSuite) -> list[str]: ...
    def register_suite(self, path: Any, suite: EvalSuite) -> None: ...
    def check_mode(self, path: Any, suite: EvalSuite) -> None: ...
    def run_item(self, item: CaseItem) -> None: ...


class CaseFailure(AssertionError):
    """An item whose scores failed; its text is the item's whole failure report. An
    AssertionError, so reporters (allure, JUnit readers) call the item failed, not broken."""


class SuiteCollectError(Exception):
    pass


class CaseSuiteError(Exception):
    """A case the suite cannot test as written (no rows to compare with): the suite's error, not
    the engine's -- reported as an error at setup, left out of the accuracy figures."""


def select_roles(case: EvalCase, run: ItemRunner) -> list[str]:
    """The roles a case runs as in this run."""
    if case.kind is Kind.ROUTING:
        return list(case.outcome)[:1]
    roles = []
    for role, outcome in case.outcome.items():
        if outcome is Outcome.CLARIFY and not run.settings.clarify:
            continue
        if run.settings.roles is not None and role.lower() not in {r.lower() for r in run.settings.roles}:
            continue  # role names are case-insensitive, as in nl2sql.yaml
        roles.append(role)
    return roles


def case_selected(case: EvalCase, run: ItemRunner) -> bool:
    wanted = run.settings.cases
    if wanted is None:
        return True
    names = {t.lower() for t in case.tags} | {d.lower() for d in case.datasources}
    return bool(names & {w.lower() for w in wanted})


class SuiteFile(pytest.File):
    """A suite YAML file given with ``--nl2sql-suite`` (or named by evals.yaml)."""

    suite: EvalSuite | None = None

    def collect(self) -> Iterator[CaseItem]:
        run: ItemRunner = self.config.stash[RUN_KEY]
        changed = changed_since_controller(self.config, self.path)
        if changed:
            raise self.CollectError(changed)
        try:
            suite = load_suite(self.path, write_cache=False)  # the session start filled the cache
        except SuiteError as exc:
            raise self.CollectError(str(exc)) from None
        self.suite = suite
        problems = run.project_problems(suite)
        if problems:
            raise self.CollectError("\n".join(problems))
        run.register_suite(self.path, suite)
        run.check_mode(self.path, suite)
        markers = MarkerNames(self.config)
        items = []
        # the items outlive the run and hold no garbage: the collections a thousand of them would
        # trigger walk the whole heap (pytest, the suites) and free nothing (docs/benchmarks.md)
        with collector.paused():
            for case in suite.cases:
                if case.status is not Status.APPROVED or not case_selected(case, run):
                    continue
                for role in select_roles(case, run):
                    for llm in run.settings.llms or (None,):  # --nl2sql-llm NAME: once per named LLM config
                        name = f"{case.id}[{role}-{llm}]" if llm else f"{case.id}[{role}]"
                        # an explicit nodeid, so pytest parses "[role]" as the parameter part, as it
                        # does for the ids it reads back (--lf, --deselect, the cache)
                        item = CaseItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", case=case, role=role, llm=llm)
                        for mark in markers.marks(case.tags, role, case.outcome[role].value):
                            item.add_marker(mark)
                        items.append(item)
        yield from items

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def changed_since_controller(config: pytest.Config, path: Path) -> str | None:
    """An xdist worker (a replacement one after a crash, too) that reads another version of a
    suite file than the controller did would make xdist, which schedules by index, run items
    twice and others never: the worker refuses to collect it, loudly."""
    digests = getattr(config, "workerinput", {}).get(DIGESTS_KEY) or {}
    key = str(Path(path).resolve())
    if key not in digests:
        return None
    now = suite_digests([path]).get(key)
    if now == digests[key]:
        return None
    return (
        f"{path}: the suite file changed during the run (this xdist worker read another version than "
        "the controller; xdist schedules items by position, so items would run twice and others never): "
        "the run stops; rerun it"
    )


_MARKER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OURS = "an nl2sql tag, role or outcome"


class MarkerNames:
    """Tags, roles and outcomes as pytest markers, registered (so ``-m aggregation`` selects
    as pytest users expect, also with ``--strict-markers``). A word that is already a marker
    of pytest or another plugin (``skip``, ``xfail``, ``flaky``, ``timeout``, ...) is left out:
    marking an item with it would change how it runs; ``-k`` still matches every word."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        lines = config.getini("markers")
        self.ours = {ln.split(":")[0].strip() for ln in lines if ln.endswith(_OURS)}  # another suite file's
        self.taken = {ln.split(":")[0].split("(")[0].strip() for ln in lines if not ln.endswith(_OURS)}
        self._marks: dict[str, pytest.MarkDecorator] = {}

    def marks(self, *words: Any) -> list[pytest.MarkDecorator]:
        """``pytest.mark.<word>`` of each usable word, made once per word (pytest makes a new
        one, checking the registered markers again, for each ``add_marker(name)``)."""
        out = []
        for word in self.usable(*words):
            mark = self._marks.get(word)
            if mark is None:
                mark = self._marks[word] = getattr(pytest.mark, word)
            out.append(mark)
        return out

    def usable(self, *words: Any) -> list[str]:
        out = []
        for word in words:
            for w in [word] if isinstance(word, str) else list(word):
                if w in self.ours:
                    out.append(w)
                elif w not in self.taken and _MARKER_NAME.match(w) and not w.startswith("nl2sql"):
                    self.config.addinivalue_line("markers", f"{w}: {_OURS}")
                    self.ours.add(w)
                    out.append(w)
        return out


class ItemParams:
    """What a parametrized test's ``item.callspec`` offers to tools (params, id); pytest's
    fixture ordering reads ``indices`` and ``_arg2scope`` (function scope: never reordered)."""

    def __init__(self, params: dict[str, Any], id: str) -> None:
        self.params = params
        self.id = id
        self.indices = dict.fromkeys(params, 0)
        self._arg2scope = dict.fromkeys(params, "function")


class CaseItem(pytest.Item):
    """One approved case asked as one role."""

    def __init__(self, *, case: EvalCase, role: str, llm: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.role = role
        self.llm = llm  # the named LLM config (--nl2sql-llm NAME), or None: the project's llm
        self.expected = case.outcome[role]
        words = {
            *case.tags,
            *case.datasources,
            case.origin.value,
            case.kind.value,
            role,
            self.expected.value,
        }
        if case.difficulty is not None:
            words.add(case.difficulty.value)
        if llm:
            words.add(llm)
        self.extra_keyword_matches.update(words)
        self.record: dict[str, Any] | None = None
        # a stable identity per item for tools that read a parametrized test's name and
        # parameters (allure's historyId, ...): the case id, parametrized by the role
        self.originalname = case.id
        self.callspec = ItemParams({"role": role, "llm": llm}, f"{role}-{llm}") if llm else ItemParams({"role": role}, role)
        self.cls = None  # read beside callspec (pytest's fixture ordering, allure)

    def setup(self) -> None:
        run: ItemRunner = self.config.stash[RUN_KEY]
        if run.settings.routes_only:
            return  # routing only: the rows are not read
        why = rows_problem(self.case) if self.expected is Outcome.ALLOWED else None
        if why is not None:
            where = f"{self.case.location}" if self.case.location else self.path.name
            raise CaseSuiteError(f"suite error: {where}: case '{self.case.id}': {why}")

    def runtest(self) -> None:
        run: ItemRunner = self.config.stash[RUN_KEY]
        run.run_item(self)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (CaseFailure, CaseSuiteError)):
            return _styled(str(excinfo.value), style or self.config.getoption("tbstyle", "auto"))
        return super().repr_failure(excinfo, style)

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        """Any exception (pytest-timeout's Failed, an engine's bug): the frames of pytest and
        pluggy pruned, as for a plain test, so the reason stays readable."""
        inner = [e for e in excinfo.traceback if not _is_framework(str(e.path))]
        return excinfo.traceback.filter(lambda e: not _is_framework(str(e.path))) if inner else excinfo.traceback

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.case.location.line - 1 if self.case.location else None
        return self.path, line, f"{self.case.id} [{self.role}-{self.llm}]" if self.llm else f"{self.case.id} [{self.role}]"


RUN_KEY = pytest.StashKey[ItemRunner]()
_FRAMEWORK = tuple(str(Path(m.__file__).parent) for m in (pytest, pluggy, _pytest))


def _is_framework(path: str) -> bool:
    return path.startswith(_FRAMEWORK)


def _styled(text: str, style: str) -> str:
    """A case's failure report in pytest's ``--tb`` style: ``line`` its reason (the first line),
    ``short`` without the SQL and the rows, anything else whole."""
    if style == "line":
        return text.splitlines()[0] if text else text
    if style == "short":
        keep = []
        for line in text.splitlines():
            if line.strip().startswith(("gold SQL:", "generated SQL:", "missing rows", "unexpected rows")):
                break
            keep.append(line)
        return "\n".join(keep)
    return text


def select_shard(config: pytest.Config, items: list[pytest.Item], shard: tuple[int, int]) -> None:
    """Deselect the cases of other shards (as ``-k`` does: pytest counts them as deselected)."""
    index, count = shard
    keep, drop = [], []
    for item in items:
        case = getattr(item, "case", None)
        if case is None or not hasattr(item, "role"):
            keep.append(item)
        elif shard_of(item.path.name, case.id, count) == index:
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
