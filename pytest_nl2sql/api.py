"""The spec's front doors, backed by the plugin.

``Engine.from_config("nl2sql.yaml")`` gives the project's engine with ``.evals``:
``engine.evals.load(path)``, ``engine.evals.run([paths], mode=..., ...)`` (runs pytest
in-process with this plugin and returns the ``RunReport``) and
``engine.evals.regenerate(path)``. ``pytest-nl2sql eval run`` maps onto the same options.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.config import Config, load_config
from pytest_nl2sql.reporting.report import RunReport
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalSuite

__all__ = ["Engine", "Evals", "Feedback", "pytest_args"]


def pytest_args(
    paths: Iterable[str | os.PathLike[str]] = (),
    *,
    config: str | os.PathLike[str] | None = None,
    mode: str | None = None,
    clarify: bool = False,
    roles: Sequence[str] | None = None,
    cases: Sequence[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    max_cost: float | None = None,
    baseline: str | os.PathLike[str] | None = None,
    workers: int | str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The pytest command line for an evaluation run."""
    args: list[str] = []
    for p in paths:
        args += ["--nl2sql-suite", str(p)]
    if config is not None:
        args += ["--nl2sql-config", str(config)]
    if mode is not None:
        args += ["--nl2sql-mode", mode]
    if clarify:
        args.append("--nl2sql-clarify")
    if roles:
        args += ["--nl2sql-roles", ",".join(roles)]
    if cases:
        args += ["--nl2sql-cases", ",".join(cases)]
    if out is not None:
        args += ["--nl2sql-out", str(out)]
    if max_cost is not None:
        args += ["--nl2sql-max-cost", str(max_cost)]
    if baseline is not None:
        args += ["--nl2sql-baseline", str(baseline)]
    if workers is not None:
        args += ["-n", str(workers)]
    args += list(extra)
    return args


class _Capture:
    def __init__(self) -> None:
        self.report: RunReport | None = None

    def pytest_nl2sql_report(self, config: Any, report: RunReport) -> None:
        report.records  # noqa: B018 -- read back from the run's spool now: the run folder goes with the run
        self.report = report


class Evals:
    """Suites of one project: load, run, regenerate."""

    def __init__(self, config: Config | None) -> None:
        self.config = config

    def load(self, path: str | os.PathLike[str]) -> EvalSuite:
        return load_suite(path)

    def _suites(self, paths: Iterable[str | os.PathLike[str]] | None) -> list[str]:
        if paths:
            return [str(p) for p in paths]
        if self.config is None:
            raise ValueError("no suites given and no nl2sql.yaml to take them from")
        return [str(p) for p in self.config.evals_suites]

    def run(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        mode: str = "plans",
        clarify: bool = False,
        roles: Sequence[str] | None = None,
        cases: Sequence[str] | None = None,
        out: str | os.PathLike[str] | None = None,
        max_cost: float | None = None,
        workers: int | str | None = None,
        extra: Sequence[str] = (),
    ) -> RunReport:
        """Run suites through pytest in-process; return the report (``.exit_code`` set)."""
        capture = _Capture()
        config_path = self.config.path if self.config is not None else None
        args = pytest_args(
            self._suites(paths),
            config=config_path,
            mode=mode,
            clarify=clarify,
            roles=roles,
            cases=cases,
            out=out,
            max_cost=max_cost,
            workers=workers,
            extra=["-q", "-p", "no:cacheprovider", *extra],
        )
        if config_path is not None:
            args += ["--rootdir", str(Path(config_path).parent)]
        code = pytest.main(args, plugins=[capture])
        report = capture.report or RunReport([], {"mode": mode})
        report.exit_code = int(code)  # type: ignore[attr-defined]
        return report

    def seed(self, datasource: str, path: str | os.PathLike[str], *, count: int = 50, seed: int = 0) -> Any:
        """Draft ``count`` cases from a datasource's schema into ``path`` (returns the cases)."""
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.seed import seed as seed_cases
        from pytest_nl2sql.upkeep.seed import write_drafts

        if self.config is None:
            raise ValueError("seed needs nl2sql.yaml (Engine.from_config)")
        registry = DatasourceRegistry.from_config(self.config)
        try:
            cases = seed_cases(datasource, registry, count=count, seed=seed)
        finally:
            registry.close()
        write_drafts(path, cases, config=self.config)
        return cases

    def audit(self, paths: Iterable[str | os.PathLike[str]]) -> list[Any]:
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.audit import audit_suite

        if self.config is None:
            raise ValueError("audit needs nl2sql.yaml (Engine.from_config)")
        registry = DatasourceRegistry.from_config(self.config)
        try:
            return [f for p in paths for f in audit_suite(p, registry)]
        finally:
            registry.close()

    def plan(self, path: str | os.PathLike[str], *, force: bool = False) -> Any:
        """Give each approved answer case of the suite a plan derived from its SQL, verified
        against the SQL's rows and written in place; a ``PlanReport`` (docs/upkeep.md)."""
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.plans import plan_suite

        if self.config is None:
            raise ValueError("plan needs nl2sql.yaml (Engine.from_config)")
        with DatasourceRegistry.from_config(self.config) as registry:
            return plan_suite(path, registry, force=force)

    def regenerate(self, path: str | os.PathLike[str], *, allow_packaged: bool = False) -> Any:
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.regenerate import regenerate

        if self.config is None:
            raise ValueError("regenerate needs nl2sql.yaml (Engine.from_config)")
        return regenerate(path, DatasourceRegistry.from_config(self.config), allow_packaged=allow_packaged)


class Feedback:
    """``engine.feedback``: thumbs-up/-down on recorded runs, and their export as drafts."""

    def __init__(self, config: Config) -> None:
        self.config = config

    @property
    def store(self) -> Any:
        from pytest_nl2sql.upkeep.feedback import store_for

        return store_for(self.config)

    def rate(self, run_id: int, good: bool = True, role: str | None = None) -> None:
        self.store.rate(run_id, good=good, role=role)

    def export(self, path: str | os.PathLike[str]) -> Any:
        from pytest_nl2sql.upkeep.feedback import export

        return export(self.store, path, config=self.config)


class Engine:
    """A project's engine and its evaluation front doors."""

    def __init__(self, config: Config, engine: Any) -> None:
        self.config = config
        self.engine = engine
        self.evals = Evals(config)
        self.feedback = Feedback(config)
        if config.feedback_store is not None and hasattr(engine, "recorder"):
            from pytest_nl2sql.upkeep.feedback import recorder

            engine.recorder = recorder(self.feedback.store)

    @classmethod
    def from_config(cls, path: str | os.PathLike[str] = "nl2sql.yaml") -> Engine:
        from pytest_nl2sql.plugin.engine_factory import build_engine

        config = load_config(path)
        return cls(config, build_engine(config.engine, config))  # checked as the plugin checks it

    def route(self, question: str, role: str) -> Any:
        return self.engine.route(question, role)

    def answer(self, question: str, role: str, llm: Any = None) -> Any:
        if llm is None:
            from pytest_nl2sql.llm import OpenAICompatibleLLM

            llm = OpenAICompatibleLLM.from_config(self.config.llm)
        return self.engine.answer(question, role, llm)
