"""The reference NL2SQL engine: router -> LLM plan -> resolver -> compiler -> validator -> adapter.

Stateless per question and cheap to build (schemas are introspected lazily, once per
process), so every xdist worker builds its own. ``make_engine(config)`` is the factory
``nl2sql.yaml`` names by default.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_nl2sql.config import Config
from pytest_nl2sql.config.model import VerifiedQuery
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError, introspect
from pytest_nl2sql.engine.compiler import CompileError
from pytest_nl2sql.engine.plan import PlanError, PlanModel, plan_json_schema
from pytest_nl2sql.engine.protocol import Answer, RouteResult, SetupError, Step
from pytest_nl2sql.engine.resolver import QUESTION_NOT_ANSWERABLE, resolve
from pytest_nl2sql.engine.router import DatasourceDoc, Router, doc_from_schema
from pytest_nl2sql.engine.validator import (
    REFUSAL_MESSAGE,
    access_denied,
    policy_restricts,
    validate_sql,
    without_suggestions,
)
from pytest_nl2sql.engine.validatorbase import FrozenSchema
from pytest_nl2sql.llm import PlanRequest

__all__ = ["ReferenceEngine", "SetupError", "make_engine"]


def make_engine(config: Config) -> ReferenceEngine:
    return ReferenceEngine(config)


class ReferenceEngine:
    """The engine this project ships; see docs/engine.md."""

    refusal_message = REFUSAL_MESSAGE

    def __init__(self, config: Config, *, registry: DatasourceRegistry | None = None) -> None:
        self.config = config
        self.registry = registry or DatasourceRegistry.from_config(config)
        self._schemas: dict[str, FrozenSchema] = {}
        self._router: Router | None = None
        self._json_schema = plan_json_schema()
        self.recorder: Any = None  # a feedback store, when nl2sql.yaml names one
        self._verified: dict[str, VerifiedQuery] | None = None

    # -- schema ---------------------------------------------------------------------
    def schema(self, datasource: str) -> FrozenSchema:
        if datasource not in self._schemas:
            info = introspect(self.registry.get(datasource))
            self._schemas[datasource] = FrozenSchema.of(info)
        return self._schemas[datasource]

    def _doc(self, name: str) -> DatasourceDoc:
        ds = self.config.datasources[name]
        info = introspect(self.registry.get(name))
        return doc_from_schema(info, description=ds.description or "", sample_questions=tuple(ds.sample_questions))

    @property
    def router(self) -> Router:
        if self._router is None:
            docs = [self._doc(name) for name in self.config.datasources]
            r = self.config.routing
            reranker = None
            if getattr(r, "reranker", None) == "minilm":
                from pytest_nl2sql.engine.rerank import (  # optional extra: embeddings
                    MiniLMEmbedder,
                    embedding_reranker,
                )

                reranker = embedding_reranker(MiniLMEmbedder(r.reranker_model) if r.reranker_model else None)
            self._router = Router(docs, candidates=r.candidates, max_datasources=r.max_datasources, reranker=reranker)
        return self._router

    def check_setup(self) -> None:
        """Before a run: every datasource opens, and every table and column a role's allow or
        deny list names exists (a typo in a deny list must not quietly let a role read data)."""
        import difflib

        problems: list[str] = []
        tables: dict[str, dict[str, set[str]]] = {}
        for name in self.config.datasources:
            try:
                schema = self.schema(name)
            except Exception as exc:  # unreachable, wrong URL, missing driver
                problems.append(str(getattr(exc, "message", None) or exc))
                continue
            tables[name.lower()] = {t.lower(): {c.lower() for c in cols} for t, cols in schema.items()}
        for role in self.config.roles.values():
            named_columns = set(role.deny_columns) | set(role.allow_columns or ())
            for ds, table in sorted(role.named_tables()):
                known = tables.get(ds)
                if known is not None and table not in known:
                    close = difflib.get_close_matches(table, sorted(known), n=1)
                    hint = f" (did you mean {ds}.{close[0]}?)" if close else ""
                    problems.append(f"roles.{role.name}: unknown table {ds}.{table}{hint}")
            for ds, table, column in sorted(named_columns):
                known = tables.get(ds, {}).get(table)
                if known is not None and column not in known:
                    close = difflib.get_close_matches(column, sorted(known), n=1)
                    hint = f" (did you mean {ds}.{table}.{close[0]}?)" if close else ""
                    problems.append(f"roles.{role.name}: unknown column {ds}.{table}.{column}{hint}")
        if problems:
            raise SetupError(f"{self.config.path}: " + "; ".join(problems))

    # -- the protocol ----------------------------------------------------------------
    def route(self, question: str, role: str) -> RouteResult:
        policy = self.config.role(role)
        allowed = [d for d in self.config.datasources if policy.allows_datasource(d)]
        routing = self.router.route(question, allowed=allowed)
        return RouteResult(ranked=routing.ranked, shortlist=routing.shortlist, tables=routing.tables, columns=routing.columns)

    def schema_text(
        self, datasources: tuple[str, ...], routing: RouteResult, policy: Any = None
    ) -> str:
        """The schema the LLM is shown: with ``policy`` (a role's), only the datasources,
        tables and columns it may read; a table with no readable column is left out."""
        lines = []
        for ds in datasources:
            if policy is not None and not policy.allows_datasource(ds):
                continue
            dialect = self.registry.get(ds).dialect
            desc = self.config.datasources[ds].description
            lines.append(f"datasource {ds} ({dialect}){': ' + desc if desc else ''}")
            for table, cols in self.schema(ds).items():
                if policy is not None:
                    if not policy.allows_table(ds, table):
                        continue
                    cols = [c for c in cols if policy.allows_column(ds, table, c)]
                    if not cols:
                        continue
                lines.append(f"  {table}({', '.join(cols)})")
        return "\n".join(lines)

    def verified_for(self, question: str) -> VerifiedQuery | None:
        """The curated query (``verified:`` in nl2sql.yaml) that answers ``question``, if one
        lists it (compared without case, spacing or the final punctuation)."""
        if self._verified is None:
            self._verified = {_said(q): v for v in self.config.verified for q in v.questions}
        return self._verified.get(_said(question))

    def answer(self, question: str, role: str, llm: Any) -> Answer:
        return self._answer(question, role, llm, ())

    def follow_up(self, question: str, role: str, llm: Any, history: list[dict[str, Any]]) -> Answer:
        """Answer ``question`` as the conversation after it narrows it (docs/engine.md,
        "Conversations"): the LLM sees the question, what was asked and what the user replied."""
        turns = [(t.get("speaker", "user"), t.get("text") or "") for t in history]
        if turns and turns[0][0] == "user" and turns[0][1].strip() == question.strip():
            turns = turns[1:]  # the question itself is in the prompt already
        return self._answer(question, role, llm, tuple(turns))

    def _answer(self, question: str, role: str, llm: Any, conversation: tuple[tuple[str, str], ...]) -> Answer:
        started = time.perf_counter()
        cost = 0.0
        steps: list[Step] = []
        try:
            policy = self.config.role(role)
        except KeyError as exc:  # an unknown role
            message = str(exc.args[0]) if exc.args else str(exc)
            return Answer(status="error", error=message, message=message)
        clock = time.perf_counter()
        routing = self.route(question, role)
        steps.append(Step(name="router", latency_s=time.perf_counter() - clock))
        retrieved = {
            "retrieved_tables": _readable_tables(routing.tables, policy),
            "retrieved_columns": _readable_columns(routing.columns, policy),
        }
        source = "generated"

        def done(**kw: Any) -> Answer:
            # a refusal names nothing, not even what routing retrieved
            names = {} if kw.get("status") == "refused" else retrieved
            if kw.get("status") == "ok":
                kw = {"source": source, "text": summary_text(kw.get("columns") or (), kw.get("rows") or []), **kw}
            return Answer(cost_usd=cost, latency_s=time.perf_counter() - started, steps=tuple(steps), **names, **kw)

        def refused(datasource: str) -> Answer:
            return done(status="refused", message=REFUSAL_MESSAGE, datasources=(datasource,))

        def failed(step: str, code: str, since: float) -> None:
            steps.append(Step(name=step, latency_s=time.perf_counter() - since, error_code=code))

        curated = self.verified_for(question)
        if curated is not None and policy.allows_datasource(curated.datasource):
            source, datasource, sql = "verified", curated.datasource, curated.sql.strip()
            steps.append(Step(name="verified_query", latency_s=0.0))
        else:
            if curated is not None:
                return refused(curated.datasource)
            shortlist = routing.shortlist or tuple(d for d in self.config.datasources if policy.allows_datasource(d))
            clock = time.perf_counter()
            try:
                result = llm.generate_plan(
                    PlanRequest(
                        question=question,
                        role=role,
                        schema_text=self.schema_text(tuple(shortlist), routing, policy),
                        json_schema=self._json_schema,
                        datasources=tuple(shortlist),
                        conversation=conversation,
                    )
                )
            except Exception as exc:
                cost += float(getattr(exc, "cost_usd", 0.0) or 0.0)
                failed("planner", "LLM_ERROR", clock)
                return done(status="error", error=f"LLM: {exc}", message=str(exc))
            cost += result.cost_usd
            try:
                plan = PlanModel.from_dict(result.plan)
            except PlanError as exc:
                failed("planner", "INVALID_PLAN", clock)
                return done(status="error", error=f"invalid plan: {exc}", message=str(exc))
            steps.append(Step(name="planner", latency_s=time.perf_counter() - clock, input_tokens=result.input_tokens,
                              output_tokens=result.output_tokens, cost_usd=result.cost_usd))
            if plan.kind == "not_answerable":
                return done(status="not_answerable", code=QUESTION_NOT_ANSWERABLE, message=plan.reason or "")
            if plan.kind == "clarify":
                return done(status="needs_clarification", message=plan.clarification or "Could you narrow the question?")
            datasource = plan.datasource or (shortlist[0] if shortlist else None)
            if datasource is None or datasource not in self.config.datasources:
                return done(status="not_answerable", code=QUESTION_NOT_ANSWERABLE, message="no such datasource")
            if not policy.allows_datasource(datasource):
                return done(status="refused", message=REFUSAL_MESSAGE)
        schema = self.schema(datasource)
        adapter = self.registry.get(datasource)
        restricted = policy_restricts(policy, datasource)
        clock = time.perf_counter()
        if source == "generated":
            try:
                resolution = resolve(plan, schema, dialect=adapter.dialect)
            except CompileError as exc:
                failed("sql_generation", "COMPILE_ERROR", clock)
                return done(status="error", error=f"compile: {exc}", message=str(exc))
            if resolution.status == "not_answerable":
                steps.append(Step(name="sql_generation", latency_s=time.perf_counter() - clock))
                if restricted:
                    # a name the schema lacks answers as a denied one does: no existence oracle
                    return refused(datasource)
                return done(status="not_answerable", code=QUESTION_NOT_ANSWERABLE, message=resolution.message)
            if resolution.sql is None:  # a resolution other than an answer's: not reached here
                failed("sql_generation", "COMPILE_ERROR", clock)
                return done(status="error", error="compile: the plan has no SQL", message="the plan has no SQL")
            sql = resolution.sql  # compiled once, by the resolution
        check = validate_sql(sql, dialect=adapter.dialect, datasource=datasource, schema=schema, policy=policy)
        if check.status == "refused":
            failed("sql_generation", "SECURITY_VIOLATION", clock)
            return refused(datasource)
        if check.status == "unknown_reference":
            steps.append(Step(name="sql_generation", latency_s=time.perf_counter() - clock))
            return done(status="not_answerable", code=QUESTION_NOT_ANSWERABLE, message=check.message, sql=sql)
        if not check.ok:
            failed("sql_generation", "VALIDATION_ERROR", clock)
            return done(status="error", error=check.message, message=check.message, sql=sql)
        steps.append(Step(name="sql_generation", latency_s=time.perf_counter() - clock))
        clock = time.perf_counter()
        try:
            res = adapter.execute(sql, role=policy)
        except QueryError as exc:
            failed("execution", f"QUERY_{str(exc.kind).upper()}", clock)
            if restricted and access_denied(exc):
                return refused(datasource)
            said = without_suggestions(exc.message) if restricted else exc.message
            return done(status="error", error=f"{exc.kind}: {said}", message=said, sql=sql, datasources=(datasource,))
        steps.append(Step(name="execution", latency_s=time.perf_counter() - clock))
        answer = done(
            status="ok",
            sql=sql,
            datasources=(datasource,),
            columns=res.columns,
            rows=res.rows,
            truncated=res.truncated,
        )
        if self.recorder is not None and not conversation:  # a follow-up answers a narrowed question
            self.recorder(question, role, answer)
        return answer

    def close(self) -> None:
        self.registry.close()


def _said(question: str) -> str:
    return " ".join(question.casefold().split()).rstrip("?.! ")


#: The rows a summary text names (the rest are counted).
_TEXT_ROWS = 3


def _text_value(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return repr(value)
    return "null" if value is None else str(value)


def summary_text(columns: Any, rows: Any) -> str:
    """The reference engine's answer text: a template over the rows (the row count, then the
    first rows' values by column), so it says only what the rows say."""
    cols = [str(c) for c in columns]
    n = len(rows)
    if n == 0:
        return "No rows."
    lines = [f"{n} row." if n == 1 else f"{n} rows."]
    for row in list(rows)[:_TEXT_ROWS]:
        values = list(row.values()) if isinstance(row, dict) else list(row)
        names = cols if len(cols) == len(values) else [f"column {i + 1}" for i in range(len(values))]
        lines.append("; ".join(f"{c}: {_text_value(v)}" for c, v in zip(names, values, strict=True)))
    return "\n".join(lines)


def _readable_tables(names: tuple[str, ...], policy: Any) -> tuple[str, ...]:
    """The ``datasource.Table`` names the role may read."""
    out = []
    for name in names:
        ds, _, table = name.partition(".")
        if table and policy.allows_table(ds, table):
            out.append(name)
    return tuple(out)


def _readable_columns(names: tuple[str, ...], policy: Any) -> tuple[str, ...]:
    """The ``datasource.Table.Column`` names the role may read."""
    out = []
    for name in names:
        ds, _, rest = name.partition(".")
        table, _, column = rest.rpartition(".")
        if table and column and policy.allows_column(ds, table, column):
            out.append(name)
    return tuple(out)
