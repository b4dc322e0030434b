"""Collection: a suite file becomes one item per approved case x role.

Collection only reads (the loader's cache aside) and gives the same items in every xdist
worker. Node ids are stable: ``evals/chinook.yaml::chinook_001[analyst]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import pytest

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.reporting.shards import shard_of
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalCase, EvalSuite, Kind, Outcome, Status

__all__ = ["CaseFailure", "CaseItem", "CaseSuiteError", "ItemRunner", "SuiteFile", "select_roles", "select_shard"]


class ItemRunner(Protocol):
    """What collection needs of the run (``plugin.run.Nl2sqlRun`` is one); collection never
    imports the run, the run imports collection."""

    settings: Any

    def project_problems(self, suite: EvalSuite) -> list[str]: ...
    def register_suite(self, path: Any, suite: EvalSuite) -> None: ...
    def check_mode(self, path: Any, suite: EvalSuite) -> None: ...
    def run_item(self, item: CaseItem) -> None: ...


class CaseFailure(Exception):
    """An item whose scores failed; its text is the item's whole failure report."""


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
        for case in suite.cases:
            if case.status is not Status.APPROVED or not case_selected(case, run):
                continue
            for role in select_roles(case, run):
                name = f"{case.id}[{role}]"
                # an explicit nodeid, so pytest parses "[role]" as the parameter part, as it
                # does for the ids it reads back (--lf, --deselect, the cache)
                yield CaseItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", case=case, role=role)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseItem(pytest.Item):
    """One approved case asked as one role."""

    def __init__(self, *, case: EvalCase, role: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.role = role
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
        self.extra_keyword_matches.update(words)
        self.record: dict[str, Any] | None = None

    def setup(self) -> None:
        run: ItemRunner = self.config.stash[RUN_KEY]
        if run.settings.mode == "retrieval" and run.settings.predictions is None:
            return  # routing only: the rows are not read
        from pytest_nl2sql.upkeep.check import rows_problem

        why = rows_problem(self.case) if self.expected is Outcome.ALLOWED else None
        if why is not None:
            where = f"{self.case.location}" if self.case.location else self.path.name
            raise CaseSuiteError(f"suite error: {where}: case '{self.case.id}': {why}")

    def runtest(self) -> None:
        run: ItemRunner = self.config.stash[RUN_KEY]
        run.run_item(self)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (CaseFailure, CaseSuiteError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.case.location.line - 1 if self.case.location else None
        return self.path, line, f"{self.case.id} [{self.role}]"


RUN_KEY = pytest.StashKey[ItemRunner]()


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
