"""Audit the gold: can a suite's expected rows be trusted? (``--nl2sql-audit``, issue 5)

No scorer catches gold that is wrong in a way the database will not tell you; this does. For
each approved case with SQL, through the case's read-only datasource adapter:

========================  ========  ==========================================================
code                      severity  finding
========================  ========  ==========================================================
``sql-failed``            error     ``sql`` (or an ``alt_sql``) does not run; the database says why
``truncated``             error     the result was cut at the datasource's row limit
``empty-result``          warning   the SQL returns no rows (a weak check: anything empty passes)
``order-without-order-by`` error    ``order_matters: true`` but no top-level ``ORDER BY``
``tie-at-limit``          error     ``ORDER BY ... LIMIT n`` cuts inside a tie, so which rows are
                                    kept is up to the database
``float-summation``       warning   a float from ``SUM``/``AVG`` changes with summation order
``redundant-alt``         warning   an ``alt_sql`` returns the same rows as ``sql``
``stale-rows``            error     stored ``rows``/``alt_rows`` differ from what the SQL returns now
``stale-order``           warning   same rows, other order (``order_matters: false``)

``datasource``            error     the case's datasource is unknown or not exactly one
``weak-gold``             warning   (``--mutants`` only) fewer than half of the gold SQL's
                                    mutants give other rows on the database, so a slightly
                                    wrong query passes; the surviving mutants are listed
``gold-fragile``          warning   (``--report`` only) in that run's JSON report, the gold was
                                    the weak side on a neighbour database (a gold finding of
                                    ``--nl2sql-test-suite``): its reason and counterexample
========================  ========  ==========================================================

A clarify case's readings (``clarifications``, each with its ``sql`` and ``rows``) are audited
the same way, each at its own line and named ``clarification 'ABOUT'`` in the findings.

**Mutants** (``pytest-nl2sql eval audit --mutants``): each gold ``sql`` is mutated
(``pytest_nl2sql.scoring.mutants``: comparison operators, DISTINCT, one WHERE conjunct
dropped, LIMIT +-1, swapped aggregates, join columns) and every mutant is run on the real
database and on ``AUDIT_NEIGHBOURS`` neighbour databases (SQLite datasources; cached in
``.nl2sql-cache/neighbours`` beside nl2sql.yaml). A mutant is killed when its rows differ from
the gold's under the case's match rule; one that fails to run is not killed, and one that
fails on the real database is left out of the rate. A line per case gives both kill rates;
a case whose rate on the real database is below ``WEAK_KILL_RATE`` (0.5) gets ``weak-gold``.

How two of them are decided:

* **Ties at a LIMIT.** The query is rewritten with sqlglot: the LIMIT raised by one and, when a
  sort key is an expression rather than an output column, that expression appended as an extra
  output column. If row *n* (the last kept) and row *n+1* (the first cut) have equal sort keys
  and the tied rows are not all identical, the cut is inside a tie.
* **Summation order.** Only queries with ``SUM``/``AVG``/``TOTAL`` whose result holds a float
  are checked. The query is re-run with every base table replaced by a subquery that yields its
  rows in reverse order (``ORDER BY rowid DESC`` in SQLite, the primary key descending
  elsewhere), which makes the database add the same values in a different order. A float that
  differs between the two runs only in its last digits (relative difference < 1e-9) is
  flagged. The check proves instability when it reports; its silence is not a proof, since one
  other order may happen to give the same bits. The cure is ``ROUND(SUM(x), 2)``.

Nothing is written: the audit only reads the suite and runs SELECTs on read-only connections.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Literal

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pytest_nl2sql.config import Config
from pytest_nl2sql.datasources import (
    Adapter,
    DatasourceRegistry,
    QueryError,
    QueryResult,
    introspect,
)
from pytest_nl2sql.datasources.guard import sqlglot_dialect
from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.safetext import line_safe
from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.mutants import (
    WEAK_KILL_RATE,
    KillReport,
    keys_from_schema,
    kill_rates,
    mutants,
)
from pytest_nl2sql.scoring.ties import tie_at_limit
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalCase, Kind, Status
from pytest_nl2sql.upkeep.check import role_problems

__all__ = ["AUDIT_NEIGHBOURS", "Finding", "Mutation", "audit_status", "audit_suite", "format_findings", "mutant_lines", "run_audit"]

Severity = Literal["error", "warning"]

#: Neighbour databases per SQLite datasource that ``--mutants`` runs the mutants on.
AUDIT_NEIGHBOURS = 5
#: Surviving mutants a ``weak-gold`` finding shows.
SHOWN_SURVIVORS = 3


@attrs.define
class Mutation:
    """``--mutants``: the neighbour databases (a ``neighbours.Neighbourhood`` or None) and the
    kill report of each case, in audit order: (suite path, case id, report)."""

    neighbourhood: Any = None
    reports: list[tuple[str, str, KillReport]] = attrs.field(factory=list)


@attrs.frozen
class Finding:
    """One thing wrong with a case's gold, where it stands in the suite file."""

    path: str
    line: int
    case_id: str
    severity: Severity
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: case '{self.case_id}': [{self.code}] {self.message}"


def format_findings(findings: Iterable[Finding]) -> str:
    """One line per finding, then a count of errors and warnings."""
    findings = list(findings)
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    lines = [line_safe(str(f)) for f in findings]  # database and suite text: neutralised
    if not findings:
        lines.append("audit: no findings")
    else:
        lines.append(f"audit: {errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)


def audit_status(findings: Iterable[Finding], fail_on_warnings: bool = False) -> int:
    """The exit status of an audit: 1 when there are errors (or warnings, on request), else 0."""
    severities = {f.severity for f in findings}
    if "error" in severities or (fail_on_warnings and "warning" in severities):
        return 1
    return 0


def _rows(result: QueryResult) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def _row_key(row: dict[str, Any]) -> tuple:
    return tuple(sorted(((k, repr(v)) for k, v in row.items())))


class _CaseAudit:
    def __init__(
        self, path: str, case: EvalCase, adapter: Adapter, mutation: Mutation | None = None, suite_match: Any = None,
        label: str = "sql",
    ) -> None:
        self.label = label  # "sql", or "clarification 'ABOUT'" for a clarify case's reading
        self.path = path
        self.case = case
        self.adapter = adapter
        self.mutation = mutation
        self.suite_match = suite_match
        self.read = sqlglot_dialect(adapter.dialect)
        self.findings: list[Finding] = []

    def add(self, severity: Severity, code: str, message: str) -> None:
        line = self.case.location.line if self.case.location else 0
        self.findings.append(Finding(self.path, line, self.case.id, severity, code, message))

    # -- running one query -------------------------------------------------------------
    def run(self, label: str, sql: str) -> QueryResult | None:
        try:
            result = self.adapter.execute(sql)
        except QueryError as exc:
            self.add("error", "sql-failed", f"{label} failed: {exc.message}")
            return None
        if result.truncated:
            self.add(
                "error",
                "truncated",
                f"{label}: the result was cut at the datasource's row limit ({self.adapter.row_limit} "
                "rows); narrow the query (the gold must be the whole answer) or raise row_limit",
            )
            return None
        if not result.rows:
            self.add("warning", "empty-result", f"{label} returns no rows (any empty answer would match)")
        return result

    def parse(self, sql: str) -> exp.Expression | None:
        try:
            return sqlglot.parse_one(sql, read=self.read)
        except SqlglotError:
            return None

    # -- the checks ---------------------------------------------------------------------
    def check_order(self, tree: exp.Expression | None) -> None:
        if self.case.order_matters and tree is not None and not tree.args.get("order"):
            self.add(
                "error",
                "order-without-order-by",
                "order_matters: true but sql has no top-level ORDER BY, so the database may return "
                "rows in any order (add ORDER BY, or set order_matters: false)",
            )

    def check_tie(self, label: str, tree: exp.Expression | None) -> None:
        def execute(sql: str, at_least: int) -> tuple[Any, Any]:
            limit = max(self.adapter.row_limit, at_least) if at_least else None
            result = self.adapter.execute(sql, row_limit=limit) if limit else self.adapter.execute(sql)
            return result.columns, result.rows

        found = tie_at_limit(tree, self.read, execute)
        if found is None:
            return
        n, tie = found
        shown = ", ".join(repr(v) for v in tie)
        self.add(
            "error",
            "tie-at-limit",
            f"{label}: ORDER BY ... LIMIT {n} cuts inside a tie: rows {n} and {n + 1} are equal on the "
            f"sort keys ({shown}), so which rows are kept is up to the database; add a unique "
            "tie-breaker to ORDER BY, or keep the ties (RANK() <= n, or >= the n-th value)",
        )

    def check_float_order(self, label: str, tree: exp.Expression | None, result: QueryResult) -> None:
        if tree is None or not any(isinstance(v, float) for row in result.rows for v in row):
            return
        summing = any(
            isinstance(node, (exp.Sum, exp.Avg))
            or (isinstance(node, exp.Anonymous) and str(node.this).upper() == "TOTAL")
            for node in tree.walk()
        )
        if not summing:
            return
        reversed_sql = self._reverse_scans(tree)
        if reversed_sql is None:
            return
        try:
            other = self.adapter.execute(reversed_sql)
        except QueryError:
            return
        if len(other.rows) != len(result.rows) or other.columns != result.columns:
            return

        def canon(row: tuple) -> tuple:
            return tuple(
                (0, f"{v:.9g}") if isinstance(v, float) else (1, repr(v)) for v in row
            )

        for a_row, b_row in zip(sorted(result.rows, key=canon), sorted(other.rows, key=canon), strict=True):
            for column, a, b in zip(result.columns, a_row, b_row, strict=True):
                if isinstance(a, float) and isinstance(b, float) and a != b and math.isclose(a, b, rel_tol=1e-9):
                    self.add(
                        "warning",
                        "float-summation",
                        f"{label}: column {column!r} is {a!r} when rows are added in one order and "
                        f"{b!r} in another, so the gold depends on the database's plan; round it, "
                        "e.g. ROUND(SUM(x), 2)",
                    )
                    return

    def _reverse_scans(self, tree: exp.Expression) -> str | None:
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        schema = None
        probe = tree.copy()
        changed = False
        for table in list(probe.find_all(exp.Table)):
            if not table.name or table.name.lower() in ctes or not isinstance(table.parent, (exp.From, exp.Join)):
                continue
            if self.adapter.dialect == "sqlite":
                order = "rowid DESC"
            else:
                schema = schema or introspect(self.adapter)
                try:
                    pk = schema.table(table.name).primary_key
                except KeyError:
                    continue
                if not pk:
                    continue
                order = ", ".join(f"{exp.to_identifier(c).sql(dialect=self.read)} DESC" for c in pk)
            bare = table.copy()
            bare.set("alias", None)
            alias = table.alias or table.name
            sub = sqlglot.parse_one(
                f"SELECT * FROM {bare.sql(dialect=self.read)} ORDER BY {order}", read=self.read
            )
            table.replace(exp.Subquery(this=sub, alias=exp.TableAlias(this=exp.to_identifier(alias))))
            changed = True
        return probe.sql(dialect=self.read) if changed else None

    def check_stale(self, label: str, field: str, stored: tuple | None, now: list[dict[str, Any]]) -> None:
        if stored is None:
            self.add("error", "stale-rows", f"no {field} stored for {label}: run regenerate")
            return
        if list(stored) == now:
            return
        if Counter(map(_row_key, stored)) == Counter(map(_row_key, now)):
            if self.case.order_matters:
                self.add(
                    "error", "stale-rows",
                    f"{field} are in another order than {label} returns them now (order_matters: true): run regenerate",
                )
            else:
                self.add(
                    "warning", "stale-order",
                    f"{field} hold the same rows {label} returns, in another order: run regenerate",
                )
            return
        missing = Counter(map(_row_key, stored)) - Counter(map(_row_key, now))
        extra = Counter(map(_row_key, now)) - Counter(map(_row_key, stored))
        self.add(
            "error",
            "stale-rows",
            f"stored {field} differ from what {label} returns now ({len(stored)} stored, {len(now)} now; "
            f"{sum(missing.values())} stored rows no longer returned, {sum(extra.values())} new): run regenerate",
        )

    def check_mutants(self, datasource: str) -> None:
        """--mutants: the kill rates of the gold sql's mutants, and ``weak-gold`` when low."""
        assert self.mutation is not None
        case = self.case
        try:
            keys = keys_from_schema(introspect(self.adapter))
        except Exception:  # noqa: BLE001 -- no schema: no join-column mutants
            keys = None
        found = mutants(case.sql or "", self.read, keys=keys)
        try:
            rule = MatchRule.build(self.suite_match, case.match, order_matters=case.order_matters)
        except (TypeError, ValueError):
            return

        def real(sql: str) -> tuple:
            result = self.adapter.execute(sql)
            return result.columns, result.rows, result.truncated

        runners: list[Callable[[str], tuple]] = []
        hood = self.mutation.neighbourhood
        if hood is not None and found:
            from functools import partial

            from pytest_nl2sql.scoring.neighbours import run_query

            try:
                runners = [partial(run_query, p) for p in hood.of(datasource) or ()]
            except Exception:  # noqa: BLE001 -- neighbours that cannot be built: the real database only
                runners = []
        try:
            report = kill_rates(case.sql or "", found, real, runners, rule)
        except QueryError:
            return
        self.mutation.reports.append((self.path, case.id, report))
        rate = report.rate_real
        if rate is None or rate >= WEAK_KILL_RATE:
            return
        survivors = report.survivors()
        shown = "; ".join(f"{m.change}: {m.sql}" for m in survivors[:SHOWN_SURVIVORS])
        more = f" (and {len(survivors) - SHOWN_SURVIVORS} more)" if len(survivors) > SHOWN_SURVIVORS else ""
        near = ""
        if report.neighbours:
            near = f"; {len(report.killed_any)} of {report.counted} with {report.neighbours} neighbour databases"
        self.add(
            "warning",
            "weak-gold",
            f"sql: only {len(report.killed_real)} of {report.counted} mutants ({rate:.0%}) give other rows "
            f"on the database{near}, so a slightly wrong query passes; make the data or the question "
            f"tell them apart. Surviving, shortest first: {shown}{more}",
        )

    # -- one case ------------------------------------------------------------------------
    def audit(self) -> list[Finding]:
        case = self.case
        tree = self.parse(case.sql or "")
        self.check_order(tree)
        label = self.label
        result = self.run(label, case.sql or "")
        fresh: list[dict[str, Any]] | None = None
        if result is not None:
            fresh = _rows(result)
            self.check_tie(label, tree)
            self.check_float_order(label, tree, result)
            self.check_stale(label, "rows" if label == "sql" else f"{label} rows", case.rows, fresh)
            if self.mutation is not None:
                self.check_mutants(case.datasources[0])
        for i, alt in enumerate(case.alt_sql):
            label = f"alt_sql[{i + 1}]"
            alt_tree = self.parse(alt)
            alt_result = self.run(label, alt)
            if alt_result is None:
                continue
            alt_rows = _rows(alt_result)
            self.check_tie(label, alt_tree)
            self.check_float_order(label, alt_tree, alt_result)
            stored = case.alt_rows[i] if i < len(case.alt_rows) else None
            self.check_stale(label, f"alt_rows[{i + 1}]", stored, alt_rows)
            # by values in column order: an alternative that only renames columns accepts
            # nothing more, since rows are matched by position unless column names are required
            named = (case.match or {}).get("column_names") == "require"
            alt_values = [tuple(r.items() if named else r.values()) for r in alt_rows]
            fresh_values = [tuple(r.items() if named else r.values()) for r in fresh] if fresh is not None else None
            if fresh_values is not None and (
                alt_values == fresh_values
                or (not case.order_matters and Counter(alt_values) == Counter(fresh_values))
            ):
                self.add(
                    "warning",
                    "redundant-alt",
                    f"{label} returns the same rows as sql, so it accepts nothing sql does not "
                    "(remove it, or make it the alternative answer it was meant to be)",
                )
        return self.findings


def audit_suite(
    path: str | os.PathLike[str], registry: DatasourceRegistry, mutation: Mutation | None = None
) -> list[Finding]:
    """Audit every approved case with SQL in the suite at ``path``; findings in file order.
    With ``mutation`` (``--mutants``), also the kill rate of each gold sql's mutants.

    Raises ``SuiteError`` when the file does not load. Nothing is written anywhere (but the
    neighbour databases' cache, with ``--mutants``).
    """
    return _audit_cases(str(path), load_suite(path, strict=False, use_cache=False), registry, mutation)


def _audited(suite: Any) -> list[Any]:
    """The cases an audit looks at: approved, answer cases with sql."""
    return [c for c in suite.cases if c.status is Status.APPROVED and c.kind is not Kind.ROUTING and c.sql is not None]


def _targets(suite: Any) -> list[tuple[Any, str]]:
    """What an audit runs: each audited case's sql, and each reading of an approved clarify
    case (issue 24) as a case of its own, at the reading's line."""
    out: list[tuple[Any, str]] = []
    audited = {id(c) for c in _audited(suite)}
    for case in suite.cases:
        if id(case) in audited:
            out.append((case, "sql"))
        if case.status is not Status.APPROVED:
            continue
        for reading in case.clarifications:
            if reading.sql is None:
                continue
            loc = attrs.evolve(case.location, line=reading.line) if case.location is not None and reading.line else case.location
            out.append((attrs.evolve(case, sql=reading.sql, rows=reading.rows, alt_sql=(), alt_rows=(), location=loc),
                        f"clarification {reading.about!r}"))
    return out


def _audit_cases(shown: str, suite: Any, registry: DatasourceRegistry, mutation: Mutation | None) -> list[Finding]:
    findings: list[Finding] = []
    unreachable: dict[str, str] = {}  # datasource -> the case that found it cannot be opened
    for case, label in _targets(suite):
        line = case.location.line if case.location else 0
        if len(case.datasources) != 1:
            findings.append(
                Finding(shown, line, case.id, "error", "datasource",
                        f"a case with sql names one datasource, this names {len(case.datasources)}")
            )
            continue
        try:
            adapter = registry.get(case.datasources[0])
        except KeyError as exc:
            findings.append(Finding(shown, line, case.id, "error", "datasource", str(exc)))
            continue
        name = case.datasources[0]
        if name in unreachable:  # said once, at the first case of the datasource
            findings.append(Finding(shown, line, case.id, "error", "datasource",
                                    f"datasource {name!r} cannot be opened (see case '{unreachable[name]}')"))
            continue
        found = _CaseAudit(shown, case, adapter, mutation, suite.match, label).audit()
        if any("cannot be opened" in f.message for f in found):
            unreachable[name] = case.id
            found = [next(f for f in found if "cannot be opened" in f.message)]
        findings.extend(found)
    return findings


def run_audit(
    paths: Iterable[str | os.PathLike[str]],
    config: Config,
    *,
    fail_on_warnings: bool = False,
    echo: Callable[[str], None] = print,
    mutants: bool = False,
    report: str | os.PathLike[str] | None = None,
    mark: str | None = None,
    note: str | None = None,
) -> int:
    """The ``--nl2sql-audit`` / ``pytest-nl2sql eval audit`` entry point: audit each suite with the
    project's datasources, print the findings, return the exit status (``audit_status``).
    A suite that does not load is printed with its problems and counts as an error.
    ``mutants`` (``--mutants``): also each case's mutant kill rates, a line per case.
    ``report`` (``--report``): a run's JSON report, whose gold findings become ``gold-fragile``.
    ``mark`` (``--mark-reviewed CASE``, with ``note``): instead of auditing, record the answer
    that report flagged for CASE as reviewed equivalent (``mark_reviewed``)."""
    findings: list[Finding] = []
    broken = 0
    audited = 0
    mutation = None
    run = None
    if report is not None:
        from pytest_nl2sql.reporting.compare import load_report

        run = load_report(report)  # a CompareError (an Nl2sqlError) names the file and the fix
    if mark is not None:
        if run is None:
            echo("audit --mark-reviewed CASE needs the run's report that flagged it: add --report REPORT.json")
            return 2
        return max(mark_reviewed(path, run, mark, note, echo) for path in paths)
    if mutants:
        from pytest_nl2sql.scoring.neighbours import from_project

        cache = config.path.parent / ".nl2sql-cache" / "neighbours"
        mutation = Mutation(from_project(config, AUDIT_NEIGHBOURS, cache))
    with DatasourceRegistry.from_config(config) as registry:
        for path in paths:
            try:
                suite = load_suite(path, strict=False, use_cache=False)  # read once
                roles = [f"{c.location or path}: case '{c.id}': {m}" for c in _audited(suite) for m in role_problems(c, config)]
                if roles:  # the one rule for roles, as suite check, pytest and regenerate
                    for line in roles:
                        echo(line)
                    broken += 1
                    continue
                findings.extend(_audit_cases(str(path), suite, registry, mutation))
                if run is not None:
                    findings.extend(gold_findings(run, str(path), suite))
                audited += len(_audited(suite))
            except SuiteError as exc:
                echo(str(exc))
                broken += 1
    if broken and not findings:
        echo(f"audit: {broken} suite(s) did not load (above); nothing else was audited")
    elif not audited and not findings:
        echo("audit: nothing to audit: no approved case with sql (drafts and retired cases are not audited)")
    else:
        if mutation is not None:
            for line in mutant_lines(mutation.reports):
                echo(line)
        echo(format_findings(findings))
    return 1 if broken else audit_status(findings, fail_on_warnings)


def _tuples(rows: Any) -> list:
    return [tuple(r) if isinstance(r, list) else r for r in rows[:5]] if isinstance(rows, list) else []


def gold_findings(report: Any, path: str, suite: Any) -> list[Finding]:
    """``gold-fragile``: the gold findings a run's JSON report holds for the cases of ``suite``
    (the file at ``path``), one per case: why, and the counterexample's rows and results."""
    cases = {c.id: c for c in _audited(suite)}
    name = os.path.basename(path)
    out: dict[str, Finding] = {}
    for rec in report.get("items") or []:
        found = (rec.get("test_suite") or {}).get("gold_finding") if isinstance(rec, dict) else None
        case = cases.get(rec.get("case_id")) if isinstance(found, dict) else None
        if case is None or case.id in out or os.path.basename(str(rec.get("suite") or name)) != name:
            continue
        cx = found.get("counterexample") or {}
        shown = ""
        if isinstance(cx, dict) and isinstance(cx.get("gold_rows"), list):
            shown = (f"; on {cx.get('row_count')} of the neighbour's rows (seed {found.get('seed')}) the gold gives "
                     f"{_tuples(cx.get('gold_rows'))!r}, the answer {_tuples(cx.get('answer_rows'))!r}")
        n = found.get("neighbour")
        at = n + 1 if isinstance(n, int) and not isinstance(n, bool) else "?"
        message = (f"gold is fragile on neighbour {at}: read it ({found.get('gold_finding')}){shown}; "
                   f"the answer that showed it: {rec.get('sql')}")
        out[case.id] = Finding(path, case.location.line if case.location else 0, case.id, "warning", "gold-fragile",
                               line_safe(message))
    return list(out.values())


def mark_reviewed(path: str | os.PathLike[str], report: Any, case_id: str, note: str | None,
                  echo: Callable[[str], None] = print) -> int:
    """``--mark-reviewed CASE``: write the answer SQL that ``report`` (a run's JSON report)
    flagged for ``case_id`` on a neighbour into the case's ``reviewed`` list as ``equivalent``
    (with ``note``), so the test-suite check does not fail it again. 0, or 1 with why not."""
    from pytest_nl2sql.suitefile.writer import add_reviewed

    name = os.path.basename(str(path))
    flagged = [r for r in report.get("items") or [] if isinstance(r, dict) and r.get("case_id") == case_id
               and os.path.basename(str(r.get("suite") or name)) == name and (r.get("test_suite") or {}).get("disagreed")]
    sqls = list(dict.fromkeys(str(r.get("sql")) for r in flagged if r.get("sql")))
    if not sqls:
        echo(f"{path}: case '{case_id}': the report has no answer the test-suite check flagged for it "
             "(mark only an answer that failed on a neighbour database: run with --nl2sql-test-suite K)")
        return 1
    suite = load_suite(path, strict=False, use_cache=False)
    case = next((c for c in suite.cases if c.id == case_id), None)
    if case is None:
        echo(f"{path}: no case {case_id!r}")
        return 1
    from pytest_nl2sql.scoring.scorers import reviewed_equivalent

    line = case.location.line if case.location else 0
    for sql in sqls:
        if reviewed_equivalent(case, sql) is not None:
            echo(f"{path}:{line}: case '{case_id}': already reviewed equivalent: {line_safe(sql)}")
            continue
        add_reviewed(path, case_id, {"sql": sql, "verdict": "equivalent", "note": note})
        echo(f"{path}:{line}: case '{case_id}': reviewed: equivalent: {line_safe(sql)}")
    return 0


def mutant_lines(reports: Iterable[tuple[str, str, KillReport]]) -> list[str]:
    """A line per case (kill rate on the database, and with the neighbours), then the total."""

    def pct(k: int, n: int) -> str:
        return f"{k}/{n} ({k / n:.0%})" if n else "0/0"

    lines = []
    total = [0, 0, 0]
    for path, case_id, r in reports:
        near = f", {pct(len(r.killed_any), r.counted)} with {r.neighbours} neighbour databases" if r.neighbours else ""
        broken = f"; {len(r.broken)} did not run" if r.broken else ""
        lines.append(f"{path}: case '{case_id}': mutants killed {pct(len(r.killed_real), r.counted)} on the database{near}{broken}")
        total[0] += r.counted
        total[1] += len(r.killed_real)
        total[2] += len(r.killed_any)
    if lines:
        lines.append(
            f"mutants: {len(lines)} case(s), {total[0]} mutants: killed {pct(total[1], total[0])} on the database, "
            f"{pct(total[2], total[0])} with the neighbour databases"
        )
    return lines

