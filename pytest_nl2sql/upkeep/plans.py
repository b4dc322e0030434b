"""``pytest-nl2sql suite plan FILE`` (``engine.evals.plan``): give each answerable case a plan.

For every approved ``kind: answer`` case with reviewed SQL and no plan (or every such case with
``force``), the plan is derived from the SQL (``upkeep/derive.py``), compiled for the case's
datasource, and **verified**: the plan's SQL and the reviewed SQL run on the datasource
(read-only, through the adapter) and must return the same rows -- in the same order when the
case says order matters, else as the same multiset; column names are not compared, as mode
plans does not compare them by default. Verified plans are written into the file in place
(``suitefile.writer.update_plans``: the file's lock, every other byte kept). A case whose SQL
the plan language cannot express, or whose derived plan returns other rows, is listed in
``failed`` with the reason and left as it is.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from pytest_nl2sql.config import Config
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError
from pytest_nl2sql.engine.compiler import CompileError, compile_plan
from pytest_nl2sql.engine.plan import PlanError, PlanModel
from pytest_nl2sql.suitefile.loader import load_text, parse_suite
from pytest_nl2sql.suitefile.model import EvalCase, Kind, Outcome, Status
from pytest_nl2sql.suitefile.writer import update_plans
from pytest_nl2sql.upkeep.derive import NotExpressible, derive_plan

__all__ = ["PlanReport", "plan_drafts", "plan_suite", "run_plan"]


@attrs.frozen
class PlanReport:
    path: str
    written: tuple[str, ...]  # cases given a verified plan
    kept: tuple[str, ...]  # cases that already had a plan (without force)
    failed: tuple[tuple[str, str], ...]  # (case id, why)
    raw: tuple[str, ...] = ()  # written plans that use the {sql: ...} escape hatch
    by_hand: tuple[str, ...] = ()  # clarify cases without a plan: mode --nl2sql-clarify needs one

    def lines(self) -> list[str]:
        if not (self.written or self.failed or self.kept):
            return [f"{self.path}: nothing to plan: no approved answer case has sql"]
        out = [
            f"{self.path}: planned {len(self.written)} cases (each verified against its SQL's rows), "
            f"{len(self.kept)} already had a plan, {len(self.failed)} could not be planned"
        ]
        if self.raw:
            out.append(f"  with raw SQL escapes ({{sql: ...}}): {', '.join(self.raw)}")
        out += [f"  failed: case '{cid}': {why}" for cid, why in self.failed]
        if self.by_hand:
            out.append(
                f"  clarify cases have no SQL to derive from; give each a plan by hand "
                f"({{kind: clarify, clarification: ...}}) for --nl2sql-clarify: {', '.join(self.by_hand)}"
            )
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _values(rows: Iterable[Any]) -> list[tuple]:
    return [tuple(r) for r in rows]


def _same_rows(plan_rows: list[tuple], gold_rows: list[tuple], order_matters: bool) -> bool:
    if order_matters:
        return plan_rows == gold_rows
    return Counter(plan_rows) == Counter(gold_rows)


def _plan_case(case: EvalCase, registry: DatasourceRegistry) -> tuple[dict[str, Any] | None, str, bool]:
    """(plan, why not, uses raw SQL) for one case."""
    if len(case.datasources) != 1 or case.datasources[0] not in registry:
        return None, "a case with sql names one datasource of nl2sql.yaml", False
    name = case.datasources[0]
    adapter = registry.get(name)
    try:
        derived = derive_plan(case.sql or "", adapter.dialect, name)
    except NotExpressible as exc:
        return None, f"the plan language cannot express {exc}", False
    try:
        model = PlanModel.from_dict(derived.plan)
        plan_sql = compile_plan(model, adapter.dialect)
    except (PlanError, CompileError) as exc:
        return None, f"the derived plan does not compile: {exc}", False
    try:
        gold = adapter.execute(case.sql or "")
        mine = adapter.execute(plan_sql)
    except QueryError as exc:
        return None, f"{exc.kind}: {exc.message}", False
    if gold.truncated or mine.truncated:
        return None, "the result hit the datasource's row limit, so it cannot be compared whole", False
    if len(gold.columns) != len(mine.columns):
        return None, f"the derived plan gives {len(mine.columns)} columns, the SQL {len(gold.columns)}", False
    if not _same_rows(_values(mine.rows), _values(gold.rows), case.order_matters):
        return None, "the derived plan returns other rows than the SQL (left for a person to write)", False
    return derived.plan, "", bool(derived.raw)


def _plan_readings(
    case: EvalCase, registry: DatasourceRegistry, force: bool, plans: dict[str, Any], sql_of: dict[str, str | None],
    kept: list[str], failed: list[tuple[str, str]], raw: list[str],
) -> None:
    """A clarify case's readings: each one with sql gets a plan keyed ``CASE_ID#N`` (issue 24)."""
    for n, reading in enumerate(case.clarifications, 1):
        key = f"{case.id}#{n}"
        if reading.sql is None:
            continue
        if reading.plan and not force:
            kept.append(key)
            continue
        plan, why, uses_raw = _plan_case(attrs.evolve(case, sql=reading.sql), registry)
        if plan is None:
            failed.append((key, f"clarification {reading.about!r}: {why}"))
            continue
        plans[key] = plan
        sql_of[key] = reading.sql
        if uses_raw:
            raw.append(key)


def plan_suite(
    path: str | os.PathLike[str],
    registry: DatasourceRegistry,
    *,
    force: bool = False,
    case_ids: Iterable[str] | None = None,
    drafts: bool = False,
) -> PlanReport:
    """Derive, verify and write the plans of the suite at ``path`` (see the module docstring);
    with ``drafts``, draft cases get plans too (the seeder and the feedback export do this)."""
    text, _ = load_text(path)
    suite = parse_suite(text, str(path), strict=False)
    wanted = set(case_ids) if case_ids is not None else None
    plans: dict[str, dict[str, Any]] = {}
    sql_of: dict[str, str | None] = {}
    kept: list[str] = []
    failed: list[tuple[str, str]] = []
    raw: list[str] = []
    by_hand: list[str] = []
    for case in suite.cases:
        if wanted is not None and case.id not in wanted:
            continue
        statuses = (Status.APPROVED, Status.DRAFT) if drafts else (Status.APPROVED,)
        if case.status is Status.APPROVED and case.sql is None and not case.plan and any(
            o is Outcome.CLARIFY for o in case.outcome.values()
        ):
            by_hand.append(case.id)
        if case.status in statuses and case.clarifications:
            _plan_readings(case, registry, force, plans, sql_of, kept, failed, raw)
        if case.status not in statuses or case.kind is not Kind.ANSWER or case.sql is None:
            continue
        if case.plan and not force:
            kept.append(case.id)
            continue
        plan, why, uses_raw = _plan_case(case, registry)
        if plan is None:
            failed.append((case.id, why))
            continue
        plans[case.id] = plan
        sql_of[case.id] = case.sql
        if uses_raw:
            raw.append(case.id)
    written: tuple[str, ...] = ()
    if plans:
        _, dropped = update_plans(path, plans, sql_of)
        failed += [(cid, "its SQL changed while the plan was derived; run again") for cid in dropped]
        written = tuple(cid for cid in plans if cid not in dropped)
    return PlanReport(
        str(path), written, tuple(kept), tuple(failed), tuple(r for r in raw if r in written), tuple(by_hand)
    )


def run_plan(
    paths: Iterable[str | os.PathLike[str]], config: Config, *, force: bool = False, echo: Callable[[str], None] = print
) -> int:
    """The ``pytest-nl2sql suite plan`` entry point: 1 when a case could not be planned."""
    status = 0
    with DatasourceRegistry.from_config(config) as registry:
        for path in paths:
            report = plan_suite(path, registry, force=force)
            echo(str(report))
            status = status or (1 if report.failed else 0)
    return status


def plan_drafts(path: str | os.PathLike[str], config: Config, echo: Callable[[str], None]) -> None:
    """Give the drafts just written their plans (derived from their SQL, verified), so that
    promoted drafts run in mode plans."""
    with DatasourceRegistry.from_config(config) as registry:
        report = plan_suite(path, registry, drafts=True)
    n = len(report.written)
    echo(f"{path}: {n} draft{'' if n == 1 else 's'} got a verified plan" + (
        f"; {len(report.failed)} did not (write theirs by hand): {', '.join(c for c, _ in report.failed)}"
        if report.failed else ""
    ))
