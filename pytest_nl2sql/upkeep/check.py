"""``pytest-nl2sql suite check FILE --config nl2sql.yaml``: a suite checked against the project.

The loader checks a suite file on its own. With the project's ``nl2sql.yaml`` (given, or found
the way pytest finds it: above the suite), this also checks what only the project knows, for
every approved case, each problem at the line of the field (``path:line:col``) with a
did-you-mean:

* the datasources it names exist in ``nl2sql.yaml``;
* the roles of its ``outcome`` are roles of ``nl2sql.yaml``;
* the ``tables`` and ``columns`` it names exist in that datasource's schema;
* its ``plan`` is one the configured engine reads: the reference engine's format (or
  nl2sql-engine's ``PlanModel`` shape, which it also reads) reading only tables and columns the
  schema has; nl2sql-engine's own ``PlanModel`` when ``engine`` is nl2sql-engine; for another
  engine, what its ``validate_plan(plan)`` says (docs/engine.md), or any mapping when it has none.
* its ``sql``, every ``alt_sql`` and every ``reviewed`` answer's sql compile against that schema: parsed and every table and
  column resolved (sqlglot, through the validator; nothing runs), a misspelt name pointed at
  where it is written (``path:line:col``);
* a case some role is allowed to answer has ``rows`` (else it is a suite error: pytest reports
  its items as errors, not as the engine's failures).

``role_problems`` is the one rule for the roles of a case, used by every door (suite check,
pytest, ``eval regenerate``, ``eval audit``).

A datasource that cannot be opened is one problem, and its cases' schema checks are skipped.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable

from pytest_nl2sql.config import DEFAULT_ENGINE, ENGINE_NL2SQL, Config
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError, introspect
from pytest_nl2sql.engine.compiler import CompileError
from pytest_nl2sql.engine.plan import PlanError, PlanModel
from pytest_nl2sql.engine.protocol import import_object
from pytest_nl2sql.engine.resolver import resolve
from pytest_nl2sql.engine.validator import UNRESTRICTED, validate_sql
from pytest_nl2sql.engine.validatorbase import FrozenSchema
from pytest_nl2sql.errors import Problem
from pytest_nl2sql.suitefile.fields import CaseSpans
from pytest_nl2sql.suitefile.loader import load_text, parse_suite
from pytest_nl2sql.suitefile.model import EvalCase, Status, rows_problem

__all__ = ["check_against_project", "role_problems", "rows_problem", "run_check"]


def role_problems(case: EvalCase, config: Config) -> list[str]:
    """The roles of ``case``'s outcome that ``nl2sql.yaml`` does not have, with a did-you-mean."""
    known_roles = {r.lower() for r in config.roles}
    return [
        f"unknown role {role!r} in {config.path.name} ({_hint(role, config.roles)}); add it to the roles of "
        f"{config.path.name} or fix the case's outcome"
        for role in case.outcome
        if role.lower() not in known_roles
    ]


def _hint(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if not close:
        lower = {k.lower(): k for k in known}
        close = [lower[c] for c in difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)]
    if close:
        return f"did you mean {close[0]!r}?"
    shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
    return f"known: {shown}" if known else "none are known"


def plan_validator(engine: str) -> Callable[[dict], list[str]] | None:
    """The configured engine's own plan check (None: the reference engine's, done here with the
    schema); ``lambda plan: []`` for an engine that brings none (any mapping is its data)."""
    if engine in (DEFAULT_ENGINE, "reference"):
        return None
    if engine == ENGINE_NL2SQL:
        from pytest_nl2sql.engine.nl2sql_engine import validate_plan

        return validate_plan
    try:
        obj = import_object(engine)
    except LookupError:
        return lambda plan: []  # the engine itself cannot be imported here: pytest says so, not suite check
    check = getattr(obj, "validate_plan", None)
    return check if callable(check) else (lambda plan: [])


class _Checker:
    def __init__(self, path: str, config: Config, registry: DatasourceRegistry, text: str = "") -> None:
        self.path = path
        self.text = text
        self.config = config
        self.registry = registry
        self.validator = plan_validator(config.engine)
        self.problems: list[Problem] = []
        self._schemas: dict[str, FrozenSchema | None] = {}

    def problem(self, case: EvalCase, spans: CaseSpans | None, field: str, message: str, *, word: str | None = None) -> None:
        line, column = (case.location.line, case.location.column) if case.location else (0, 0)
        if spans is not None and field in spans.nodes:
            node = spans.nodes[field][1]
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
            if word:  # point at the name itself, where the field's text spells it
                found = self._find(word, node.start_mark.line, node.end_mark.line)
                if found is not None:
                    line, column = found
        self.problems.append(Problem(self.path, line, column, message, case.id))

    def _find(self, word: str, first: int, last: int) -> tuple[int, int] | None:
        if not hasattr(self, "_lines"):
            self._lines = self.text.splitlines()
        pattern = re.compile(rf"(?<![\w.]){re.escape(word)}(?!\w)|(?<=\.){re.escape(word)}(?!\w)", re.IGNORECASE)
        for i in range(first, min(last + 1, len(self._lines))):
            m = pattern.search(self._lines[i])
            if m:
                return i + 1, m.start() + 1
        return None

    def schema(self, name: str) -> FrozenSchema | None:
        if name not in self._schemas:
            try:
                info = introspect(self.registry.get(name))
                self._schemas[name] = FrozenSchema.of(info)
            except QueryError as exc:
                self.problems.append(Problem(self.path, 0, 0, f"datasource {name!r}: {exc.message}", None))
                self._schemas[name] = None
        return self._schemas[name]

    def case(self, case: EvalCase, spans: CaseSpans | None) -> None:
        config = self.config
        known_ds = {d.lower(): d for d in config.datasources}
        for ds in case.datasources:
            if ds.lower() not in known_ds:
                self.problem(case, spans, "datasources",
                             f"unknown datasource {ds!r} in {config.path.name} ({_hint(ds, config.datasources)})")
        for message in role_problems(case, config):
            self.problem(case, spans, "outcome", message)
        why = rows_problem(case)
        if why is not None:
            self.problem(case, spans, "sql", why)
        if len(case.datasources) != 1 or case.datasources[0].lower() not in known_ds:
            return
        name = known_ds[case.datasources[0].lower()]
        schema = self.schema(name)
        if schema is None:
            return
        tables = {t.lower(): t for t in schema}
        for table in case.tables:
            if table.lower() not in tables:
                self.problem(case, spans, "tables", f"unknown table {table!r} in {name} ({_hint(table, schema)})")
        for ref in case.columns:
            table, _, column = ref.rpartition(".")
            real = tables.get(table.lower())
            if real is None:
                self.problem(case, spans, "columns", f"unknown table {table!r} in {name} ({_hint(table, schema)})")
            elif column.lower() not in {c.lower() for c in schema[real]}:
                self.problem(case, spans, "columns",
                             f"unknown column {real}.{column} in {name} ({_hint(column, schema[real])})")
        if case.plan:
            self.plan(case, spans, name, schema)
        reviewed = [("reviewed", r.sql) for r in getattr(case, "reviewed", ())]
        for field, sql in [("sql", case.sql), *(("alt_sql", alt) for alt in case.alt_sql), *reviewed]:
            if sql:
                self.sql(case, spans, field, sql, name, schema)

    def sql(self, case: EvalCase, spans: CaseSpans | None, field: str, sql: str, name: str, schema: FrozenSchema) -> None:
        """Compile one gold SQL against the schema (parse, resolve every name; nothing runs)."""
        check = validate_sql(sql, dialect=self.registry.get(name).dialect, datasource=name, schema=schema, policy=UNRESTRICTED)  # names, not access
        if check.status == "unknown_reference":
            columns = sorted({c for cols in schema.values() for c in cols} | set(schema))
            for ref in check.unknown:
                word = ref.rpartition(".")[2]
                self.problem(case, spans, field, f"{field} reads {ref!r}, which {name} does not have ({_hint(word, columns)})",
                             word=word)
        elif check.status == "invalid":
            self.problem(case, spans, field, f"{field} does not compile: {check.message}")

    def plan(self, case: EvalCase, spans: CaseSpans | None, name: str, schema: FrozenSchema) -> None:
        if self.validator is not None:
            try:
                found = list(self.validator(dict(case.plan)) or [])
            except Exception as exc:  # noqa: BLE001 -- a third party's check must not end the check
                found = [f"plan: the engine's validate_plan raised {type(exc).__name__}: {exc}"]
            if found:
                self.problem(case, spans, "plan", "; ".join(str(p) for p in found[:5]))
            return
        raw = dict(case.plan)
        raw.setdefault("datasource", name)
        try:
            plan = PlanModel.from_dict(raw)
        except PlanError as exc:
            self.problem(case, spans, "plan", _plan_message(exc))
            return
        try:
            resolution = resolve(plan, schema, dialect=self.registry.get(name).dialect)
        except CompileError as exc:
            self.problem(case, spans, "plan", f"plan: {exc}")
            return
        if resolution.status == "not_answerable" and plan.kind == "answer":
            missing = resolution.message.split(": ", 1)[-1]
            columns = sorted({c for cols in schema.values() for c in cols} | set(schema))
            hints = []
            for ref in (m.strip() for m in missing.split(",")):
                word = ref.rpartition(".")[2]
                hints.append(f"{ref} ({_hint(word, columns)})")
            self.problem(case, spans, "plan", f"plan reads names {name} does not have: {'; '.join(hints)}")


def _plan_message(exc: PlanError) -> str:
    """A plan problem with a did-you-mean for a misspelt key (the format lists the known ones)."""
    problem = exc.problem
    if problem.startswith("unknown key '") and "(known: " in problem:
        word = problem.split("'")[1]
        known = problem.rsplit("(known: ", 1)[1].rstrip(")").split(", ")
        close = difflib.get_close_matches(word, known, n=1)
        if close:
            problem = f"unknown key {word!r} (did you mean {close[0]!r}?)"
    return f"{exc.path}: {problem}"


def check_against_project(path: str | os.PathLike[str], config: Config) -> list[Problem]:
    """Every problem of the suite at ``path`` that only the project can tell (see above)."""
    shown = str(path)
    text, _ = load_text(path)
    spans: dict[str, CaseSpans] = {}
    suite = parse_suite(text, shown, strict=False, spans=spans)
    with DatasourceRegistry.from_config(config) as registry:
        checker = _Checker(shown, config, registry, text)
        for case in suite.cases:
            if case.status is Status.APPROVED:
                checker.case(case, spans.get(case.id))
    return checker.problems


def run_check(path: str | os.PathLike[str], config: Config, *, echo: Callable[[str], None] = print) -> int:
    """The project part of ``pytest-nl2sql suite check``: print each problem; 1 when there are any."""
    problems = check_against_project(path, config)
    for problem in problems:
        echo(str(problem))
    return 1 if problems else 0
